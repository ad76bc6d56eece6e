// SPDX-License-Identifier: Apache-2.0
// A stateful Matmul planned and autotuned once, executed in a loop on one stream (no planning, no allocation but
// the results), then given new operands produced on another stream.
#include <cstdio>
#include <vector>

#include "sample_support.hpp"

__global__ void fill(float* p, std::int64_t n, float v) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = v;
}

int main() {
  namespace cp = cuplan;
  sample::require_gpu("matmul_autotune_loop");
  const std::int64_t n = 512;
  cp::Stream compute, producer;
  auto a = cp::Tensor::empty({n, n}, cp::f32, cp::Device::cuda(0), compute);
  auto b = cp::Tensor::empty({n, n}, cp::f32, cp::Device::cuda(0), compute);
  fill<<<(n * n + 255) / 256, 256, 0, compute.native()>>>(a.data<float>(), n * n, 1.0f);
  fill<<<(n * n + 255) / 256, 256, 0, compute.native()>>>(b.data<float>(), n * n, 0.5f);
  sample::check(cudaGetLastError() == cudaSuccess, "operands filled");

  cp::Matmul mm(a, b, {.compute = cp::Compute::tf32});
  mm.plan({.stream = compute});
  mm.autotune({.iterations = 5, .stream = compute});
  const auto algos = mm.algorithms();
  std::printf("%zu candidates; fastest: %s (%.4f ms)\n", algos.size(), algos[0].description.c_str(),
              algos[0].measured_ms.value_or(-1.0f));

  cp::Tensor d;
  for (int step = 0; step < 100; ++step) d = mm.execute({.stream = compute});  // enqueue only
  compute.synchronize();
  std::vector<float> h(n * n);
  sample::check(cudaMemcpy(h.data(), d.data(), h.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess,
                "loop result copied");
  sample::check(h[0] == 0.5f * n && h.back() == 0.5f * n, "loop results are A @ B");

  // A new operand made on another stream; reset_operand orders the producer stream after the object's last work,
  // and the user orders the next execute after the producer with an event.
  auto a2 = cp::Tensor::empty({n, n}, cp::f32, cp::Device::cuda(0), producer);
  mm.reset_operand(cp::MatmulOperand::a, a2, producer);
  fill<<<(n * n + 255) / 256, 256, 0, producer.native()>>>(a2.data<float>(), n * n, 2.0f);
  sample::check(cudaGetLastError() == cudaSuccess, "new operand filled");
  cp::Event ready = producer.record();
  d = mm.execute({.stream = compute, .after = {ready}});
  compute.synchronize();
  sample::check(cudaMemcpy(h.data(), d.data(), h.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess,
                "result after the reset copied");
  sample::check(h[0] == 1.0f * n && h.back() == 1.0f * n, "after reset from the producer stream, results use A2");
  return 0;
}
