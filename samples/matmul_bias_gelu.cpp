// SPDX-License-Identifier: Apache-2.0
// A batched product with the bias and gelu epilog fused: D[b] = gelu(A[b] @ W + bias), W shared by the batch.
// Runs on the GPU when there is one, otherwise on the CPU (same results within rounding).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "sample_support.hpp"

int main() {
  namespace cp = cuplan;
  const std::int64_t batch = 4, m = 96, k = 64, n = 80;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(batch * m * k), w(k * n), bias(m);
  for (auto* v : {&a, &w, &bias})
    for (auto& x : *v) x = u(rng);

  const bool gpu = cp::cuda_available();
  std::printf("matmul_bias_gelu: running on the %s\n",
              gpu ? "GPU (cuBLASLt, fused epilog)" : "CPU (OpenBLAS; no GPU found)");
  // Host operands: the call blocks and returns a host tensor of shape (batch, m, n).
  cp::Tensor d = cp::matmul(cp::TensorView(a.data(), {batch, m, k}), cp::TensorView(w.data(), {k, n}),
                            {.epilog = cp::Epilog::gelu_bias, .bias = cp::TensorView(bias.data(), {m})});
  sample::check(d.shape() == cp::Shape({batch, m, n}), "result shape is (batch, m, n)");
  // Epilogs with a bias give D in cuBLASLt's native column-major orientation on every backend: read it through
  // its strides, (m * n, 1, m) here.
  const cp::Strides& st = d.strides();
  std::printf("D strides: (%lld, %lld, %lld)\n", (long long)st[0], (long long)st[1], (long long)st[2]);

  double err = 0, ref_norm = 0;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double x = bias[i];
        for (std::int64_t kk = 0; kk < k; ++kk) x += double(a[(b * m + i) * k + kk]) * w[kk * n + j];
        const double ref = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
        const double got = d.data<float>()[b * st[0] + i * st[1] + j * st[2]];
        err += (got - ref) * (got - ref);
        ref_norm += ref * ref;
      }
  const double rel = std::sqrt(err / ref_norm);
  std::printf("relative error against a float64 reference: %.2e\n", rel);
  sample::check(rel < 1e-5, "fused bias + gelu matches the reference");
  return 0;
}
