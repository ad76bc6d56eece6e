// SPDX-License-Identifier: Apache-2.0
// Two independent Thrust pipelines on two streams, and a third stage that depends on one of them through an event.
//
// Thrust algorithms run on the stream of their execution policy. thrust::cuda::par_nosync.on(stream) enqueues on
// `stream` and does not synchronise after each algorithm (plain thrust::cuda::par.on(stream) may), so the host
// enqueues all three stages at once and the GPU runs pipelines A and B side by side:
//
//   s1: A = sequence, A *= 2, inclusive scan        ─┐ event `a_ready`
//   s2: B = sequence, B = B * B                       │ (independent of A)
//   s3:                         waits for a_ready ───┘ C = A + 1
//
// The third stage waits for A only, on the GPU; pipeline B is never waited for by s3. Without a GPU the same
// program runs with host tensors, host streams (work runs at the call, events are complete at once) and Thrust's
// host policy.
#include <cstdint>
#include <vector>

#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/system_error.h>
#include <thrust/transform.h>

#include "sample_support.hpp"

namespace cp = cuplan;

// Thrust's execution policy for a stream: the host policy for a host stream, par_nosync on a CUDA stream.
struct HostPolicy {
  auto operator()(const cp::Stream&) const { return thrust::host; }
};
struct DevicePolicy {
  auto operator()(const cp::Stream& s) const { return thrust::cuda::par_nosync.on(s.native()); }
};

// The three stages with `policy(stream)` giving the Thrust execution policy of a stream.
template <class PolicyFor>
void run_stages(PolicyFor policy, const cp::Stream& s1, const cp::Stream& s2, const cp::Stream& s3, cp::Tensor& a,
                cp::Tensor& b, cp::Tensor& c, std::int64_t n) {
  std::int64_t* pa = a.data<std::int64_t>();
  std::int64_t* pb = b.data<std::int64_t>();
  std::int64_t* pc = c.data<std::int64_t>();

  // Pipeline A on s1: a[i] = sum_{k<=i} 2k = i (i + 1).
  thrust::sequence(policy(s1), pa, pa + n, std::int64_t{0});
  thrust::transform(policy(s1), pa, pa + n, pa, [] __host__ __device__(std::int64_t v) { return 2 * v; });
  thrust::inclusive_scan(policy(s1), pa, pa + n, pa);
  cp::Event a_ready = s1.record();

  // Pipeline B on s2, independent of A: b[i] = i * i.
  thrust::sequence(policy(s2), pb, pb + n, std::int64_t{0});
  thrust::transform(policy(s2), pb, pb + n, pb, [] __host__ __device__(std::int64_t v) { return v * v; });

  // Stage C on s3 depends on A only: wait for A's event on the GPU, then c[i] = a[i] + 1. `a` is read on s3 by a
  // raw algorithm, so record that use: its memory then outlives the work on s3 whatever is dropped first.
  s3.wait(a_ready);
  a.record_stream(s3);
  thrust::transform(policy(s3), pa, pa + n, pc, [] __host__ __device__(std::int64_t v) { return v + 1; });
}

int main() {
  const cp::Device device = sample::device("thrust_pipelines");
  try {  // sample::run reports a cuplan::Error; a Thrust error comes out to here
    return sample::run("thrust_pipelines", [&] {
      constexpr std::int64_t n = 1 << 22;
      cp::Stream s1(device), s2(device), s3(device);
      auto a = cp::Tensor::empty({n}, cp::i64, device, s1);
      auto b = cp::Tensor::empty({n}, cp::i64, device, s2);
      auto c = cp::Tensor::empty({n}, cp::i64, device, s3);
      if (device.is_cpu())
        run_stages(HostPolicy{}, s1, s2, s3, a, b, c, n);
      else
        run_stages(DevicePolicy{}, s1, s2, s3, a, b, c, n);

      // Results: each copy runs on the stream that produced the tensor (host memory involved: blocking).
      std::vector<std::int64_t> host_b(n), host_c(n);
      cp::copy(b, cp::TensorView(host_b.data(), {n}), s2);
      cp::copy(c, cp::TensorView(host_c.data(), {n}), s3);
      bool b_right = true, c_right = true;
      for (std::int64_t i = 0; i < n; ++i) {
        b_right = b_right && host_b[i] == i * i;
        c_right = c_right && host_c[i] == i * (i + 1) + 1;
      }
      sample::check(b_right, "pipeline B on s2: b[i] = i * i");
      sample::check(c_right, "stage C on s3 after pipeline A on s1: c[i] = i (i + 1) + 1");
    });
  } catch (const thrust::system_error& error) {
    std::fprintf(stderr, "thrust_pipelines: Thrust error: %s\n", error.what());
    return 1;
  }
}
