// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernels and helpers for ordering tests.
//  - spin_kernel / spin_then_write: keep a stream busy for a known number of clock cycles (clock64).
//  - HostGate + wait_for_gate: keep a stream busy until the host opens the gate, so "not yet done" is observed
//    deterministically rather than by racing a timer.
//  - write_value / copy_value: single-int producers and consumers whose result shows which order work ran in.

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace cuplan::testing {

/// Throws std::runtime_error naming the failing call. (Self-contained on purpose: CUDA test files can include this
/// header without the library's internal headers.)
inline void check_cuda_call(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status));
}
#define CUPLAN_TEST_CUDA(expr) ::cuplan::testing::check_cuda_call((expr), #expr)

/// Spins for `cycles` GPU clock cycles.
static __global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

/// Spins for `cycles` clock cycles, then stores `value` to `*target`.
static __global__ void spin_then_write(int* target, int value, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  *target = value;
}

/// Stores `value` to `*target`.
static __global__ void write_value(int* target, int value) {
  *target = value;
}

/// Copies `*source` to `*target`.
static __global__ void copy_value(const int* source, int* target) {
  *target = *source;
}

/// Spins until the host sets `*gate` (host-mapped memory) or `max_cycles` pass; then sets `*timed_out` if the gate
/// never opened, so a test can report that instead of hanging.
static __global__ void wait_for_gate(const volatile int* gate, int* timed_out, long long max_cycles) {
  const long long start = clock64();
  while (*gate == 0) {
    if (clock64() - start > max_cycles) {
      *timed_out = 1;
      return;
    }
  }
}

/// Clock cycles of device `device` in `milliseconds` (from the peak clock rate; spins last at least that long).
inline long long cycles_for_ms(double milliseconds, int device = 0) {
  int khz = 0;
  CUPLAN_TEST_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return static_cast<long long>(milliseconds * static_cast<double>(khz));
}

/// What a call queued behind a spin did: its host time, and whether the spin was still running when it returned.
struct CallBehindSpin {
  double host_ms = 0;
  bool returned_during_spin = false;
};

/// Queues a `spin_ms` spin on `stream` (after draining it), runs `call`, and says how long it took and whether it
/// returned while the spin still ran; drains the stream again before returning.
template <class Call>
CallBehindSpin call_behind_spin(cudaStream_t stream, double spin_ms, Call&& call) {
  CUPLAN_TEST_CUDA(cudaStreamSynchronize(stream));
  spin_kernel<<<1, 1, 0, stream>>>(cycles_for_ms(spin_ms));
  CUPLAN_TEST_CUDA(cudaGetLastError());
  const auto start = std::chrono::steady_clock::now();
  call();
  CallBehindSpin result;
  result.host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result.returned_during_spin = cudaStreamQuery(stream) == cudaErrorNotReady;
  CUPLAN_TEST_CUDA(cudaStreamSynchronize(stream));
  return result;
}

/// A flag in host-mapped pinned memory that a kernel on the GPU waits for (wait_for_gate). The destructor opens the
/// gate first, so a failing test never leaves a kernel spinning.
class HostGate {
 public:
  HostGate() {
    CUPLAN_TEST_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&flags_), 2 * sizeof(int), cudaHostAllocMapped));
    flags_[1] = 0;  // set by the kernel when it gave up waiting
    // With lazy module loading, a kernel's first launch loads its code and can wait for work already running on
    // the device, which would serialise a held stream with the consumer. Launch every test kernel once first.
    flags_[0] = 1;
    int* scratch = nullptr;
    CUPLAN_TEST_CUDA(cudaMalloc(reinterpret_cast<void**>(&scratch), 2 * sizeof(int)));
    wait_for_gate<<<1, 1>>>(flags_, flags_ + 1, 1);
    spin_kernel<<<1, 1>>>(1);
    spin_then_write<<<1, 1>>>(scratch, 0, 1);
    write_value<<<1, 1>>>(scratch, 0);
    copy_value<<<1, 1>>>(scratch, scratch + 1);
    CUPLAN_TEST_CUDA(cudaGetLastError());
    CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
    CUPLAN_TEST_CUDA(cudaFree(scratch));
    flags_[0] = 0;  // the gate, closed
    flags_[1] = 0;
  }
  ~HostGate() {
    if (opener_.joinable()) opener_.join();
    open();
    (void)cudaDeviceSynchronize();
    (void)cudaFreeHost(flags_);
  }
  HostGate(const HostGate&) = delete;
  HostGate& operator=(const HostGate&) = delete;

  /// Enqueues a kernel on `stream` that holds it until open() (or about 20 s, then timed_out() is true).
  void hold(cudaStream_t stream) {
    wait_for_gate<<<1, 1, 0, stream>>>(flags_, flags_ + 1, cycles_for_ms(20000.0));
    CUPLAN_TEST_CUDA(cudaGetLastError());
  }
  void open() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *static_cast<volatile int*>(flags_) = 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  /// Opens the gate from another thread after `delay`: for a test that then blocks in a read which must wait for
  /// the held stream, so that the read is issued while the stream is still held.
  void open_after(std::chrono::milliseconds delay) {
    if (opener_.joinable()) opener_.join();
    opener_ = std::thread([this, delay] {
      std::this_thread::sleep_for(delay);
      open();
    });
  }
  bool timed_out() const { return static_cast<volatile int*>(flags_)[1] != 0; }

 private:
  int* flags_ = nullptr;
  std::thread opener_;
};

/// One int on the device, initialised to `initial`. Allocate it before holding any stream: cudaFree in the destructor
/// waits for the whole device.
class DeviceInt {
 public:
  explicit DeviceInt(int initial = 0) {
    CUPLAN_TEST_CUDA(cudaMalloc(reinterpret_cast<void**>(&value_), sizeof(int)));
    CUPLAN_TEST_CUDA(cudaMemcpy(value_, &initial, sizeof(int), cudaMemcpyHostToDevice));
  }
  ~DeviceInt() { (void)cudaFree(value_); }
  DeviceInt(const DeviceInt&) = delete;
  DeviceInt& operator=(const DeviceInt&) = delete;
  int* get() const { return value_; }
  /// Reads the value in the order of `stream` (only that stream is waited for, so other streams may stay held).
  int read(cudaStream_t stream) const {
    int host = 0;
    CUPLAN_TEST_CUDA(cudaMemcpyAsync(&host, value_, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUPLAN_TEST_CUDA(cudaStreamSynchronize(stream));
    return host;
  }

 private:
  int* value_ = nullptr;
};

}  // namespace cuplan::testing
