// SPDX-License-Identifier: Apache-2.0
// The current stream: StreamScope (like CuPy's `with s:`) and Stream::use().
//
// Every cuplan call that does GPU work and is given no stream runs on current_stream(). This sample shows how the
// current stream is chosen and restored:
//   1. inside a StreamScope, allocations, copies and your own kernels (launched on current_stream()) go to its stream;
//   2. scopes nest, and the previous stream comes back when a scope ends, also when it ends by an exception;
//   3. Stream::use() makes a stream current until another use() changes it;
//   4. the current stream belongs to the calling thread: another thread still sees its own default.
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

// y[i] = 2 * x[i] + 1: stands for any kernel of your own.
__global__ void twice_plus_one(const std::int32_t* x, std::int32_t* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    y[i] = 2 * x[i] + 1;
}

int main() {
  sample::require_gpu("stream_scope");
  return sample::run("stream_scope", [] {
    constexpr std::int64_t n = 1 << 20;
    std::vector<std::int32_t> host_in(n), host_out(n, -1);
    for (std::int64_t i = 0; i < n; ++i) host_in[i] = static_cast<std::int32_t>(i);

    const cp::StreamRef outside = cp::current_stream();  // the legacy default stream unless configured otherwise
    cp::Stream s;

    // 1. Everything in the scope that takes no explicit stream runs on s.
    cp::Tensor x, y;
    {
      cp::StreamScope scope(s);
      sample::check(cp::current_stream() == s, "inside the scope the current stream is s");
      x = cp::Tensor::empty({n}, cp::i32, cp::Device::cuda(0));  // stream-ordered allocation on s
      y = cp::Tensor::empty({n}, cp::i32, cp::Device::cuda(0));
      sample::check(x.allocation_stream() == s, "a tensor created in the scope is allocated on s");
      cp::copy(cp::TensorView(host_in.data(), {n}), x);  // host -> device on s (host memory: blocking)
      twice_plus_one<<<256, 256, 0, cp::current_stream()>>>(x.data<std::int32_t>(), y.data<std::int32_t>(), n);
      sample::check(cudaGetLastError() == cudaSuccess, "kernel launched on the current stream");
    }
    sample::check(cp::current_stream() == outside, "after the scope the previous stream is current again");

    // 2. Scopes nest; leaving one, also by an exception, restores the stream that was current before it.
    cp::Stream inner;
    {
      cp::StreamScope outer_scope(s);
      {
        cp::StreamScope inner_scope(inner);
        sample::check(cp::current_stream() == inner, "the innermost scope wins");
      }
      sample::check(cp::current_stream() == s, "leaving the inner scope restores the outer stream");
      try {
        cp::StreamScope failing_scope(inner);
        throw std::runtime_error("failure inside a scope");
      } catch (const std::runtime_error&) {
      }
      sample::check(cp::current_stream() == s, "a scope left by an exception restores the outer stream");
    }

    // 3. use() makes s current until changed, like CuPy's s.use(). The copy below runs on s, in order after the
    // kernel enqueued on s above, so it reads the finished y.
    s.use();
    sample::check(cp::current_stream() == s, "after s.use() the current stream is s");
    cp::copy(y, cp::TensorView(host_out.data(), {n}));  // device -> host on s (blocking)

    // 4. The current stream is per thread: a new thread starts on its default stream, not on s.
    bool other_thread_sees_default = false;
    std::thread([&] { other_thread_sees_default = cp::current_stream() == outside; }).join();
    sample::check(other_thread_sees_default, "another thread does not see this thread's use()");

    // Going back to the default: use() it explicitly.
    cp::Stream::legacy_default().use();
    sample::check(cp::current_stream() != s, "after legacy_default().use() s is no longer current");

    bool all_right = true;
    for (std::int64_t i = 0; i < n; ++i) all_right = all_right && host_out[i] == 2 * host_in[i] + 1;
    sample::check(all_right, "y = 2 x + 1 for every element");
  });
}
