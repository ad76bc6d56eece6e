// SPDX-License-Identifier: Apache-2.0
// Events: timing GPU work, and ordering work on one stream after work on another.
//
//   1. Timing: two timing events recorded around a kernel on s1 measure that kernel alone (Event::elapsed_ms).
//   2. Ordering: s2 waits for an event recorded on s1, so a copy on s2 reads what the kernel on s1 wrote, without
//      blocking the host in between. Stream::wait(other stream) is the short form of record + wait.
#include <cmath>
#include <cstdint>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

// a[i] = b[i] * a[i] + 8, `repeats` times: enough work to be worth timing.
__global__ void multiply_add(std::int64_t* a, const std::int64_t* b, std::int64_t n, int repeats) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t value = a[i];
    for (int r = 0; r < repeats; ++r) value = b[i] * value + 8;
    a[i] = value;
  }
}

int main() {
  sample::require_gpu("stream_events");
  return sample::run("stream_events", [] {
    constexpr std::int64_t n = 1 << 22;
    constexpr int repeats = 3;
    std::vector<std::int64_t> host_a(n), host_b(n), host_result(n, -1);
    for (std::int64_t i = 0; i < n; ++i) {
      host_a[i] = i % 1000;
      host_b[i] = i % 7;
    }

    cp::Stream s1, s2;
    auto a = cp::Tensor::empty({n}, cp::i64, cp::Device::cuda(0), s1);
    auto b = cp::Tensor::empty({n}, cp::i64, cp::Device::cuda(0), s1);
    cp::copy(cp::TensorView(host_a.data(), {n}), a, s1);  // host memory involved: returns when done
    cp::copy(cp::TensorView(host_b.data(), {n}), b, s1);

    // 1. Timing: only what is enqueued on s1 between the two records is measured.
    cp::Event start(/*timing=*/true), stop(/*timing=*/true);
    start.record(s1);
    multiply_add<<<512, 256, 0, s1>>>(a.data<std::int64_t>(), b.data<std::int64_t>(), n, repeats);
    sample::check(cudaGetLastError() == cudaSuccess, "kernel launched on s1");
    stop.record(s1);

    // 2. Ordering: s2 must not read `a` before the kernel on s1 has written it. The host does not wait here; s2
    // does, on the GPU. `a` was allocated on s1 and is now used on s2 by a cuplan call, which records that use, so
    // its memory is not reused before s2 is done with it.
    cp::Event computed = s1.record();
    s2.wait(computed);
    cp::copy(a, cp::TensorView(host_result.data(), {n}), s2);  // device -> host on s2: blocking, result ready now

    bool all_right = true;
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t expected = host_a[i];
      for (int r = 0; r < repeats; ++r) expected = host_b[i] * expected + 8;
      all_right = all_right && host_result[i] == expected;
    }
    sample::check(all_right, "the copy on s2 saw the values the kernel on s1 wrote");

    stop.synchronize();
    const float kernel_ms = cp::Event::elapsed_ms(start, stop);
    std::printf("kernel on s1 took %.3f ms (measured with events; the copy on s2 is not included)\n", kernel_ms);
    sample::check(std::isfinite(kernel_ms) && kernel_ms >= 0.0f, "elapsed time is a finite, non-negative number");
    sample::check(computed.done(), "the event is done once the work it captured has finished");

    // Stream::wait(other) orders all work enqueued on s1 so far before later work on s2 (an event made for you).
    multiply_add<<<512, 256, 0, s1>>>(a.data<std::int64_t>(), b.data<std::int64_t>(), n, 1);
    sample::check(cudaGetLastError() == cudaSuccess, "second kernel launched on s1");
    s2.wait(s1);
    cp::copy(a, cp::TensorView(host_result.data(), {n}), s2);
    all_right = true;
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t expected = host_a[i];
      for (int r = 0; r < repeats + 1; ++r) expected = host_b[i] * expected + 8;
      all_right = all_right && host_result[i] == expected;
    }
    sample::check(all_right, "after s2.wait(s1) the copy on s2 saw the second kernel's values");
  });
}
