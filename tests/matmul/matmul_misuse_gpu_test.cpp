// SPDX-License-Identifier: Apache-2.0
// Misuse rows that need CUDA (skipped without a GPU): aliasing on device memory for Matmul and FFT, and D written
// over C on cuBLASLt (C == D with equal layouts), which must give D = A B + C.

#include <gtest/gtest.h>

#include <vector>

#include "matmul/matmul_reference.hpp"
#include "support/misuse_table.hpp"

namespace cuplan::testing {
namespace {

const Execution kCuda = Execution::cuda();

Tensor device_random(Shape shape) {
  const std::vector<float> host = random_vector<float>(static_cast<std::size_t>(checked_numel(shape)));
  Tensor d = Tensor::empty(shape, f32, Device::cuda(0));
  copy(TensorView(host.data(), f32, shape), d);
  return d;
}

TEST(MisuseOnGpu, DeviceAliasingRows) {
  CUPLAN_REQUIRE_GPU();
  const Tensor a = device_random({8, 8}), b = device_random({8, 8}), c = device_random({8, 8});
  Tensor spectrum = Tensor::empty({8, 8}, c64, Device::cuda(0));
  const std::vector<std::complex<float>> zeros(64);
  copy(TensorView(zeros.data(), c64, {8, 8}), spectrum);
  const TensorView shifted_c(static_cast<float*>(c.data()) + 1, f32, {8, 8}, c.strides(), Device::cuda(0),
                             MemorySpace::device);
  const std::vector<MisuseRow> rows = {
      {"matmul_out_is_a",
       [&] {
         Matmul m(a, b, {.execution = kCuda});
         m.plan();
         m.execute({.out = a.view()});
       },
       Expect::invalid_argument,
       {"out overlaps a"}},
      {"matmul_out_shifted_over_c",
       [&] {
         Matmul m(a, b, {.c = TensorRef(c), .beta = 1.0, .execution = kCuda});
         m.plan();
         m.execute({.out = shifted_c});
       },
       Expect::invalid_argument,
       {"out overlaps c"}},
      {"fft_out_is_operand",
       [&] { fft(spectrum, spectrum.view(), {.execution = kCuda}); },
       Expect::invalid_argument,
       {"out overlaps operand"}},
      {"fft_out_rows_overlap",
       [&] {
         const Tensor out = Tensor::empty({8, 8}, c64, Device::cuda(0));
         fft(spectrum, TensorView(out.data(), c64, {8, 8}, Strides{1, 1}, Device::cuda(0), MemorySpace::device),
             {.execution = kCuda});
       },
       Expect::invalid_argument,
       {"out overlaps itself"}},
  };
  for (const MisuseRow& row : rows) check_row(row);
}

TEST(MisuseOnGpu, MatmulOutputOverCWorksOnCublasLt) {
  CUPLAN_REQUIRE_GPU();
  const std::int64_t m = 33, n = 17, k = 9;
  const Tensor a = device_random({m, k}), b = device_random({k, n});
  Matmul probe(a, b, {.execution = kCuda});
  probe.plan();
  const Tensor layout = probe.execute();  // D's layout for this product
  // C in exactly D's layout, random values kept on the host for the reference.
  Tensor c = Tensor::empty_strided({m, n}, layout.strides(), f32, Device::cuda(0));
  const std::vector<float> c_values = random_vector<float>(static_cast<std::size_t>(m * n));
  copy(TensorView(c_values.data(), f32, {m, n}), c);
  const std::vector<cd> av = read_all(a.to(Device::cpu())), bv = read_all(b.to(Device::cpu()));
  Matmul mm(a, b, {.c = TensorRef(c), .beta = 1.0, .execution = kCuda});
  mm.plan();
  const Tensor d = mm.execute({.out = c.view()});
  EXPECT_EQ(d.data(), c.data());
  const std::vector<cd> got = read_all(d.to(Device::cpu()));
  std::vector<cd> expected(static_cast<std::size_t>(m * n));
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t col = 0; col < n; ++col) {
      cd sum = c_values[static_cast<std::size_t>(r * n + col)];
      for (std::int64_t i = 0; i < k; ++i)
        sum += av[static_cast<std::size_t>(r * k + i)] * bv[static_cast<std::size_t>(i * n + col)];
      expected[static_cast<std::size_t>(r * n + col)] = sum;
    }
  EXPECT_LT(relative_error(got, expected), 1e-5);
}

}  // namespace
}  // namespace cuplan::testing
