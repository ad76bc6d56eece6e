// SPDX-License-Identifier: Apache-2.0
#pragma once
// Randomized multi-stream programs for the stress test and bench (docs/misuse.md, "Stress"). A seeded generator
// writes a program over 8 square c64 tensors and 4 streams: FFT and Matmul in function and class forms (with
// reset_operand and release_operand), copies, user kernels writing operands, and spin kernels that widen every
// window. The runner gives every operation the edges it needs (its stream waits for the last write of what it reads
// and writes and for the reads since of what it writes), through `.after` or Stream::wait at random. The same
// program run with every stream mapped to one must give the same tensors. `planted` drops every edge of one
// operation that reads a tensor just written on another stream, behind a long spin: the control that shows a
// missing edge is caught.

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numbers>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"

namespace cuplan::stress {

inline constexpr int tensors = 8;
inline constexpr int streams = 4;
inline constexpr std::int64_t n = 32;  // every tensor is n x n c64

enum class Kind { fft_function, fft_class, fft_reset, fft_release, matmul_function, matmul_class, copy, kernel, spin };

struct Op {
  Kind kind;
  int stream = 0;
  int src = 0, dst = 1, extra = 2;  // tensors read (src, extra) and written (dst); for class ops `extra` is the object
  bool use_after = false;           // edges through `.after` (else Stream::wait)
  bool planted = false;             // no edges at all (the control)
  long long spin_cycles = 0;
};

inline std::vector<Op> generate(std::uint64_t seed, int count, bool planted) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int k) { return static_cast<int>(rng() % static_cast<std::uint64_t>(k)); };
  std::vector<Op> ops;
  ops.reserve(static_cast<std::size_t>(count) + 4);
  while (static_cast<int>(ops.size()) < count) {
    Op op;
    op.stream = pick(streams);
    op.src = pick(tensors);
    do op.dst = pick(tensors);
    while (op.dst == op.src);
    op.extra = pick(tensors);
    op.use_after = pick(2) == 0;
    const int r = pick(100);
    op.kind = r < 15   ? Kind::fft_function
              : r < 30 ? Kind::fft_class
              : r < 34 ? Kind::fft_reset
              : r < 36 ? Kind::fft_release
              : r < 50 ? Kind::matmul_function
              : r < 64 ? Kind::matmul_class
              : r < 78 ? Kind::copy
              : r < 92 ? Kind::kernel
                       : Kind::spin;
    if (op.kind == Kind::spin) op.spin_cycles = 20'000 + static_cast<long long>(rng() % 200'000);
    ops.push_back(op);
  }
  if (planted) {
    // Mid-program: a long spin, a write of tensor 0 on stream 0, then a read of it on stream 1 with no edge.
    const auto at = ops.begin() + count / 2;
    Op spin{Kind::spin, 0};
    spin.spin_cycles = 200'000'000;    // about 0.1 s: the write is surely pending when the read is enqueued
    Op write{Kind::copy, 0, 2, 0, 0};  // a cuplan write (copy of tensor 2 into 0): the checker sees cuplan's writes
    Op read{Kind::copy, 1, 0, 1, 0};
    read.planted = true;
    ops.insert(at, {spin, write, read});
  }
  return ops;
}

__global__ void stress_spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// A user kernel writing an operand: x = 0.5 x + 0.25 (bounded, exactly reproducible).
__global__ void stress_affine(cuFloatComplex* x, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) x[i] = make_cuFloatComplex(0.5f * x[i].x + 0.25f, 0.5f * x[i].y - 0.25f);
}

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

/// Runs a program; `one_stream` maps every stream to the first. Returns the tensors' bytes at the end.
class Runner {
 public:
  Runner(std::uint64_t seed, bool one_stream) : one_stream_(one_stream) {
    std::mt19937_64 rng(seed ^ 0x5eed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<std::complex<float>> host(static_cast<std::size_t>(n * n));
    for (int s = 0; s < streams; ++s) streams_.emplace_back();
    for (int t = 0; t < tensors; ++t) {
      for (auto& v : host) v = {u(rng), u(rng)};
      tensors_.push_back(Tensor::empty(Shape{n, n}, c64, Device::cuda(0), streams_[0]));
      copy(TensorView(host.data(), Shape{n, n}), tensors_.back(), streams_[0]);
    }
    // A unitary matrix (the normalised DFT): products keep norms, so long programs stay finite.
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        host[static_cast<std::size_t>(i * n + j)] =
            std::polar(1.0f / std::sqrt(float(n)), -2.0f * std::numbers::pi_v<float> * float(i * j % n) / float(n));
    unitary_ = Tensor::empty(Shape{n, n}, c64, Device::cuda(0), streams_[0]);
    copy(TensorView(host.data(), Shape{n, n}), unitary_, streams_[0]);
    streams_[0].synchronize();
    state_.resize(tensors);
    for (int t = 0; t < tensors; ++t) {
      ffts_.emplace_back(tensors_[t], FFTOptions{.normalization = Normalization::ortho, .stream = streams_[0]});
      ffts_.back().plan();
      fft_operand_.push_back(t);
      matmuls_.emplace_back(tensors_[t], unitary_, MatmulOptions{.stream = streams_[0]});
      matmuls_.back().plan();
      mm_operand_.push_back(t);
    }
    for (auto& s : streams_) s.synchronize();
  }

  void run(const std::vector<Op>& ops) {
    for (const Op& op : ops) run_one(op);
  }

  std::vector<std::vector<unsigned char>> result() {
    std::vector<std::vector<unsigned char>> out;
    for (auto& s : streams_) s.synchronize();
    for (const Tensor& t : tensors_) {
      std::vector<unsigned char> bytes(static_cast<std::size_t>(t.numel()) * 8);
      copy(t, TensorView(reinterpret_cast<std::complex<float>*>(bytes.data()), Shape{n, n}));
      out.push_back(std::move(bytes));
    }
    return out;
  }

  std::int64_t operations() const { return operations_; }

 private:
  struct TensorState {
    std::shared_ptr<Event> write;
    std::vector<std::shared_ptr<Event>> reads;
  };

  Stream& stream_of(const Op& op) { return streams_[one_stream_ ? 0 : op.stream]; }

  // The edges an op needs: RAW on what it reads, WAW and WAR on what it writes.
  std::vector<std::shared_ptr<Event>> edges(std::initializer_list<int> reads, int write) {
    std::vector<std::shared_ptr<Event>> out;
    for (int r : reads)
      if (state_[r].write) out.push_back(state_[r].write);
    if (write >= 0) {
      if (state_[write].write) out.push_back(state_[write].write);
      for (auto& e : state_[write].reads) out.push_back(e);
    }
    return out;
  }

  // Orders `s` after `events`: through the returned EventList (when the call takes one and they fit) or
  // Stream::wait. EventList takes an initializer list, so up to three go through `.after`.
  EventList order(const Op& op, Stream& s, const std::vector<std::shared_ptr<Event>>& events, bool takes_after) {
    if (op.planted) return {};
    if (takes_after && op.use_after) {
      if (events.empty()) return {};
      if (events.size() == 1) return {*events[0]};
      if (events.size() == 2) return {*events[0], *events[1]};
      if (events.size() == 3) return {*events[0], *events[1], *events[2]};
    }
    for (auto& e : events) s.wait(*e);
    return {};
  }

  void done(Stream& s, std::initializer_list<int> reads, int write) {
    auto event = std::make_shared<Event>(s.record());
    for (int r : reads) state_[r].reads.push_back(event);
    if (write >= 0) {
      state_[write].write = event;
      state_[write].reads.clear();
    }
  }

  static int other_than(int t, int avoid) { return t != avoid ? t : (t + 1) % tensors; }

  void run_one(const Op& op) {
    ++operations_;
    Stream& s = stream_of(op);
    const int src = op.src, k = op.extra;
    switch (op.kind) {
      case Kind::spin:
        stress_spin<<<1, 1, 0, s.native()>>>(op.spin_cycles);
        check(cudaGetLastError(), "spin kernel");
        return;
      case Kind::kernel: {
        const int dst = op.dst;
        order(op, s, edges({}, dst), false);
        stress_affine<<<(n * n + 255) / 256, 256, 0, s.native()>>>(tensors_[dst].data<cuFloatComplex>(), int(n * n));
        check(cudaGetLastError(), "affine kernel");
        done(s, {}, dst);
        return;
      }
      case Kind::copy: {
        const int dst = op.dst;
        order(op, s, edges({src}, dst), false);
        // The planted read takes borrowed views: cuplan orders its own Tensors, so only a view can miss an edge.
        if (op.planted)
          copy(tensors_[src].view(), tensors_[dst].view(), s);
        else
          copy(tensors_[src], tensors_[dst], s);
        done(s, {src}, dst);
        return;
      }
      case Kind::fft_function: {
        const int dst = op.dst;
        const EventList after = order(op, s, edges({src}, dst), true);
        fft(tensors_[src], tensors_[dst].view(), {.normalization = Normalization::ortho, .stream = s, .after = after});
        done(s, {src}, dst);
        return;
      }
      case Kind::fft_reset:
        ffts_[k].reset_operand(tensors_[src], s);
        fft_operand_[k] = src;
        return;
      case Kind::fft_release:
        ffts_[k].release_operand();
        fft_operand_[k] = -1;
        return;
      case Kind::fft_class: {
        if (fft_operand_[k] < 0) {
          ffts_[k].reset_operand(tensors_[src], s);
          fft_operand_[k] = src;
        }
        const int a = fft_operand_[k], dst = other_than(op.dst, a);
        const EventList after = order(op, s, edges({a}, dst), true);
        ffts_[k].execute({.stream = s, .after = after, .out = tensors_[dst].view()});
        done(s, {a}, dst);
        return;
      }
      case Kind::matmul_function: {
        // D = (A U + C) / 2 into dst: norms stay bounded.
        const int dst = op.dst, c = op.extra;
        const EventList after = order(op, s, edges({src, c}, dst), true);
        Tensor d =
            matmul(tensors_[src], unitary_, {.c = tensors_[c], .alpha = 0.5, .beta = 0.5, .stream = s, .after = after});
        copy(d, tensors_[dst], s);
        done(s, {src, c}, dst);
        return;
      }
      case Kind::matmul_class: {
        if (op.use_after && src != mm_operand_[k]) {
          matmuls_[k].reset_operand(MatmulOperand::a, tensors_[src], s);
          mm_operand_[k] = src;
        }
        const int a = mm_operand_[k], dst = other_than(op.dst, a);
        const EventList after = order(op, s, edges({a}, dst), true);
        matmuls_[k].execute({.stream = s, .after = after, .out = tensors_[dst].view()});
        done(s, {a}, dst);
        return;
      }
    }
  }

  bool one_stream_;
  std::vector<Stream> streams_;
  std::vector<Tensor> tensors_;
  Tensor unitary_;
  std::vector<TensorState> state_;
  std::vector<FFT> ffts_;
  std::vector<int> fft_operand_;  // -1: released
  std::vector<Matmul> matmuls_;
  std::vector<int> mm_operand_;
  std::int64_t operations_ = 0;
};

}  // namespace cuplan::stress
