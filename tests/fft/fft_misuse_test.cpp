// SPDX-License-Identifier: Apache-2.0
// Misuse of the FFT API, table-driven (CPU execution): aliasing and overlap, enum and option ranges, validation on
// plan-cache hits, every member after free(). Plus the in-place R2C -> C2R round trip that must work.

#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "fft/fft_test_util.hpp"
#include "support/misuse_table.hpp"

namespace cuplan::testing {
namespace {

using cf = std::complex<float>;
const Execution kCpu = Execution::cpu();

// Buffers outlive every row (the rows run after the table is built).
struct Buffers {
  std::vector<cf> c = random_vector<cf>(1024);
  std::vector<cf> c2 = random_vector<cf>(1024);
  std::vector<float> r = random_vector<float>(1024);
};
std::vector<MisuseRow> rows() {
  Buffers& b = table_buffers<Buffers>();
  const TensorView x(b.c.data(), {4, 8});
  const TensorView other(b.c2.data(), {4, 8});
  std::vector<MisuseRow> t;
  // Aliasing and overlap.
  t.push_back({"out_rows_overlap",
               [=] {
                 fft(x, TensorView(b.c2.data(), c64, {4, 8}, Strides{1, 1}), {.execution = kCpu});
               },
               Expect::invalid_argument,
               {"out overlaps itself", "[1, 1]"}});
  t.push_back({"out_is_operand_function",
               [=] { fft(x, x, {.execution = kCpu}); },
               Expect::invalid_argument,
               {"FFT", "out overlaps operand", "sharing memory"}});
  t.push_back({"out_is_operand_on_cache_hit",
               [=] {
                 fft(x, other, {.execution = kCpu});  // a valid call makes the plan
                 fft(other, other, {.execution = kCpu});
               },
               Expect::invalid_argument,
               {"out overlaps operand"}});
  t.push_back({"out_is_operand_class",
               [=] {
                 FFT f(x, {.execution = kCpu});
                 f.plan();
                 f.execute({.out = x});
               },
               Expect::invalid_argument,
               {"out overlaps operand"}});
  t.push_back({"rfft_out_over_operand",
               [=] {
                 const TensorView real(b.r.data(), {4, 16});
                 rfft(real, TensorView(b.r.data(), c64, {4, 9}, row_major_strides(Shape{4, 9})), {.execution = kCpu});
               },
               Expect::invalid_argument,
               {"out overlaps operand"}});
  t.push_back({"inplace_c2c_self_overlapping",
               [=] {
                 fft(TensorView(b.c.data(), c64, {4, 8}, Strides{4, 1}), {.inplace = true, .execution = kCpu});
               },
               Expect::invalid_argument,
               {"operand overlaps itself", "[4, 1]"}});
  t.push_back(
      {"inplace_c2c_rows_overlap_last_axis",  // a layout that nests: silently wrong before
       [=] {
         fft(TensorView(b.c.data(), c64, {4, 8}, Strides{2, 1}), {.axes = {1}, .inplace = true, .execution = kCpu});
       },
       Expect::invalid_argument,
       {"operand overlaps itself", "[2, 1]"}});
  // Enum and option ranges, class and function forms.
  t.push_back({"normalization_42",
               [=] { FFT(x, {.normalization = bad<Normalization>(42), .execution = kCpu}); },
               Expect::invalid_argument,
               {"normalization", "Normalization", "got 42"}});
  t.push_back({"normalization_257_on_cache_hit",
               [=] {
                 fft(x, {.normalization = Normalization::inverse, .execution = kCpu});
                 fft(x, {.normalization = bad<Normalization>(257), .execution = kCpu});  // 257 & 0xff == inverse
               },
               Expect::invalid_argument,
               {"fft", "normalization", "got 257"}});
  t.push_back({"fft_type_7",
               [=] { fft(x, {.execution = kCpu, .fft_type = bad<FFTType>(7)}); },
               Expect::invalid_argument,
               {"fft_type", "FFTType", "got 7"}});
  t.push_back({"parity_5",
               [=] { irfft(x, {.last_axis_parity = bad<Parity>(5), .execution = kCpu}); },
               Expect::invalid_argument,
               {"irfft", "last_axis_parity", "got 5"}});
  t.push_back({"result_layout_9",
               [=] { FFT(x, {.result_layout = bad<ResultLayout>(9), .execution = kCpu}); },
               Expect::invalid_argument,
               {"result_layout", "got 9"}});
  t.push_back({"planning_3",
               [=] { FFT(x, {.execution = kCpu, .planning = bad<Planning>(3)}); },
               Expect::invalid_argument,
               {"FFT", "planning", "Planning value from 0 to 2", "got 3"}});
  t.push_back({"planning_9_on_cache_hit",
               [=] {
                 fft(x, {.execution = kCpu, .planning = Planning::measure});
                 fft(x, {.execution = kCpu, .planning = bad<Planning>(9)});
               },
               Expect::invalid_argument,
               {"fft", "planning", "Planning value from 0 to 2", "got 9"}});
  t.push_back({"blocking_3",
               [=] { FFT(x, {.execution = kCpu, .blocking = bad<Blocking>(3)}); },
               Expect::invalid_argument,
               {"blocking", "got 3"}});
  t.push_back({"direction_4",
               [=] {
                 FFT f(x, {.execution = kCpu});
                 f.plan();
                 f.execute({.direction = bad<Direction>(4)});
               },
               Expect::invalid_argument,
               {"direction", "Direction", "got 4"}});
  t.push_back({"negative_threads",
               [=] { fft(x, {.execution = Execution::cpu(-3)}); },
               Expect::invalid_argument,
               {"threads", "got -3"}});
  t.push_back({"two_hundred_axes",
               [=] { fft(x, {.axes = std::vector<int>(200, 0), .execution = kCpu}); },
               Expect::invalid_argument,
               {"axes", "1 to 3", "got 200"}});
  t.push_back({"execution_cuda_device_minus_5",
               [=] { FFT(x, {.execution = Execution::cuda(-5)}); },
               Expect::invalid_argument,
               {"FFT", "execution", "Execution::cuda device", "got -5"}});
  t.push_back({"four_axes_class",
               [=] {
                 FFT(x, {.axes = {0, 1, 0, 1}, .execution = kCpu});
               },
               Expect::invalid_argument,
               {"axes", "got 4"}});
  t.push_back({"misaligned_operand_message",
               [=] {
                 const auto* bytes = reinterpret_cast<const std::byte*>(b.c.data()) + 4;
                 FFT(TensorView(bytes, c64, {4, 8}), {.execution = kCpu});
               },
               Expect::invalid_argument,
               {"FFT: operand must be aligned to 8 bytes"}});
  if (!cuda_available()) {
    // A view that claims device memory on a machine without a GPU: the FFT call is to blame, not a stream lookup.
    t.push_back({"device_view_without_gpu",
                 [=] {
                   fft(TensorView(b.c.data(), c64, {4, 8}, row_major_strides(Shape{4, 8}), Device::cuda(0),
                                  MemorySpace::device));
                 },
                 Expect::not_supported,
                 {"FFT", "operand", "cuda:0"}});
  }
  // Every public member after free().
  const auto freed = [=](auto member) {
    return [=] {
      FFT f(x, {.execution = kCpu});
      f.plan();
      f.free();
      member(f);
    };
  };
  const std::vector<std::pair<const char*, std::function<void(FFT&)>>> members = {
      {"plan", [](FFT& f) { f.plan(); }},
      {"execute", [](FFT& f) { f.execute(); }},
      {"reset_operand", [=](FFT& f) { f.reset_operand(x); }},
      {"release_operand", [](FFT& f) { f.release_operand(); }},
      {"type", [](FFT& f) { (void)f.type(); }},
      {"axes", [](FFT& f) { (void)f.axes(); }},
      {"result_shape", [](FFT& f) { (void)f.result_shape(); }},
      {"result_dtype", [](FFT& f) { (void)f.result_dtype(); }},
      {"result_strides", [](FFT& f) { (void)f.result_strides(); }},
      {"uses_cuda", [](FFT& f) { (void)f.uses_cuda(); }},
      {"workspace_size", [](FFT& f) { (void)f.workspace_size(); }},
      {"describe", [](FFT& f) { (void)f.describe(); }},
  };
  for (const auto& [name, member] : members)
    t.push_back({std::string("after_free_") + name, freed(member), Expect::state_error, {"FFT", name}});
  return t;
}

CUPLAN_MISUSE_SUITE(FftMisuse, rows());

// An in-place R2C, then an in-place C2R of its result (complex strides [9, 1]): the round trip returns the input.
// The real rows are padded to 2 * (n / 2 + 1) values, as docs/fft.md describes.
class FftInplaceRoundTrip : public ::testing::TestWithParam<std::int64_t> {};
TEST_P(FftInplaceRoundTrip, ReturnsTheInput) {
  const std::int64_t n = GetParam(), rows = 4, padded = 2 * (n / 2 + 1);
  std::vector<double> buffer(static_cast<std::size_t>(rows * padded), std::numeric_limits<double>::quiet_NaN());
  const std::vector<double> input = random_vector<double>(static_cast<std::size_t>(rows * n));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      buffer[static_cast<std::size_t>(i * padded + j)] = input[static_cast<std::size_t>(i * n + j)];
  const TensorView real(buffer.data(), f64, {rows, n}, Strides{padded, 1});
  const Tensor spectrum = rfft(real, {.axes = {1}, .inplace = true, .execution = kCpu});
  EXPECT_EQ(spectrum.strides(), (Strides{padded / 2, 1}));
  // The spectrum against a float64 DFT of the input.
  std::vector<cd> x(input.begin(), input.end());
  const auto expected = truncate_axis(reference_dft(x, {rows, n}, {1}, -1), {rows, n}, 1, n / 2 + 1);
  EXPECT_LT(relative_error(to_dense(spectrum.view()), expected), tolerance(f64, n));
  const Tensor back = irfft(spectrum, {.axes = {1},
                                       .last_axis_parity = n % 2 == 0 ? Parity::even : Parity::odd,
                                       .inplace = true,
                                       .normalization = Normalization::inverse,
                                       .execution = kCpu});
  ASSERT_EQ(back.shape(), (Shape{rows, n}));
  EXPECT_EQ(back.data(), static_cast<void*>(buffer.data()));
  EXPECT_LT(relative_error(to_dense(back.view()), std::vector<cd>(input.begin(), input.end())), tolerance(f64, n));
}
INSTANTIATE_TEST_SUITE_P(Lengths, FftInplaceRoundTrip, ::testing::Values(16, 17));

// Thread counts above the hardware concurrency are clamped, and the transform still computes the right values.
TEST(FftMisuseThreads, HugeThreadCountIsClampedAndCorrect) {
  const std::vector<cf> data = random_vector<cf>(64 * 16);
  const Tensor y = fft(TensorView(data.data(), {64, 16}), {.execution = Execution::cpu(100000)});
  std::vector<cd> x(data.begin(), data.end());
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(x, {64, 16}, {0, 1}, -1)), tolerance(c64, 1024));
}

}  // namespace
}  // namespace cuplan::testing
