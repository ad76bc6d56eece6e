// SPDX-License-Identifier: Apache-2.0
// Convolution on the GPU: the fused cuFFTDx route at every compiled length and kind against the float64 reference
// (outputs poisoned), the route choice and its refusals, the fused and separate routes against each other, and the
// stream contract (two streams, reset_operand and reset_kernel across streams, each after a ~50 ms spin so that a
// missing ordering edge shows as a wrong result). Skips without a GPU; the fused cases skip without MathDx.

#include <gtest/gtest.h>

#include <complex>
#include <optional>
#include <string>
#include <vector>

#include "convolution/convolution_test_util.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {
namespace {

constexpr std::int64_t kLengths[] = {256, 512, 1024, 2048, 4096, 8192, 16384};

void spin(StreamRef stream) {
  spin_kernel<<<1, 1, 0, stream.native()>>>(cycles_for_ms(50.0));
  CUPLAN_TEST_CUDA(cudaGetLastError());
}

#define CUPLAN_REQUIRE_FUSED()                                                  \
  do {                                                                          \
    CUPLAN_REQUIRE_GPU();                                                       \
    if (!CUPLAN_HAS_FUSED_FFT)                                                  \
      GTEST_SKIP() << "this build has no fused kernels (MathDx not found: see " \
                      "docs/convolution.md, CUPLAN_HAS_FUSED_FFT 0)";           \
  } while (0)

/// Runs `statement` (which makes a Convolution or calls fftconvolve on the fused route); where it needs a kernel of a
/// length this build did not compile (CUPLAN_FUSED_FFT_LENGTHS picks them), the test skips, naming the length.
#define CUPLAN_SKIP_IF_NOT_COMPILED(statement)                                       \
  try {                                                                              \
    statement;                                                                       \
  } catch (const NotSupported& e) {                                                  \
    if (std::string(e.what()).find("was compiled") == std::string::npos) throw;      \
    GTEST_SKIP() << "needs a fused kernel this build did not compile: " << e.what(); \
  }

/// Forced fused route, `rows` rows of n with a kernel of k (per row when `per_row`), against the reference. Returns
/// false when this build has no kernel of that length.
template <class T>
bool check_fused(std::int64_t rows, std::int64_t n, std::int64_t k, ConvolutionMode mode, bool per_row = false,
                 std::int64_t row_stride = 0, const char* described = nullptr) {
  SCOPED_TRACE(::testing::Message() << dtype_of<T>.name() << " rows " << rows << " n " << n << " k " << k << " "
                                    << to_string(mode) << (per_row ? " per row" : ""));
  auto hx = HostArray<T>::random({rows, n},
                                 row_stride ? std::vector<std::int64_t>{row_stride, 1} : std::vector<std::int64_t>{});
  auto hk = HostArray<T>::random({per_row ? rows : 1, k});
  Operand x = to_space(hx, Space::cuda);
  Operand kernel = to_space(hk, Space::cuda);
  std::optional<Convolution> conv;
  try {
    conv.emplace(x.view, kernel.view,
                 ConvolutionOptions{
                     .axes = {1}, .mode = mode, .route = ConvolutionRoute::fused, .execution = Execution::cuda()});
  } catch (const NotSupported& e) {
    if (std::string(e.what()).find("was compiled") != std::string::npos) return false;
    throw;
  }
  conv->plan();
  EXPECT_EQ(conv->route(), ConvolutionRoute::fused);
  EXPECT_NE(conv->describe().find("fused"), std::string::npos) << conv->describe();
  if (described != nullptr) EXPECT_NE(conv->describe().find(described), std::string::npos) << conv->describe();
  const auto shape = convolution_shape({rows, n}, {1, k}, {1}, mode);
  Tensor out = poisoned(conv->result_dtype(), shape, Space::cuda);
  conv->execute({.out = out.view()});
  const auto expected = reference_convolution(hx.dense(), {rows, n}, hk.dense(), hk.shape, {1}, mode);
  EXPECT_LT(relative_error(to_dense(out.view()), expected),
            convolution_tolerance(conv->result_dtype(), conv->fft_lengths()[0]))
      << conv->describe();
  return true;
}

TEST(ConvolutionGpu, FusedEveryCompiledLengthKindAndMode) {
  CUPLAN_REQUIRE_FUSED();
  int ran = 0;
  for (std::int64_t length : kLengths) {
    // n + k - 1 == length: one FFT of `length` a row, or overlap-save segments of a shorter compiled length where the
    // cost model finds them cheaper (FusedOverlapSaveSegments); circular rows always run one FFT of `length`.
    const std::int64_t k = length / 8 + 1, n = length - k + 1;
    for (ConvolutionMode mode : {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid}) {
      ran += check_fused<std::complex<float>>(3, n, k, mode);
      ran += check_fused<std::complex<double>>(2, n, k, mode);
      ran += check_fused<float>(3, n, k, mode);
      ran += check_fused<double>(2, n, k, mode);
    }
    ran += check_fused<std::complex<float>>(2, length, k, ConvolutionMode::circular);
    ran += check_fused<float>(2, length, 3, ConvolutionMode::circular);
    ran += check_fused<double>(2, length, 5, ConvolutionMode::circular);
  }
  EXPECT_GT(ran, 0) << "no fused kernel was compiled into this build";
}

TEST(ConvolutionGpu, FusedKernelPerRowPaddedRowsAndAPartialLastBlock) {
  CUPLAN_REQUIRE_FUSED();
  // Odd row counts leave a block with missing rows when cuFFTDx puts several rows in a block.
  check_fused<std::complex<float>>(7, 200, 57, ConvolutionMode::full, true);
  check_fused<float>(5, 900, 100, ConvolutionMode::same, true);
  check_fused<std::complex<double>>(3, 300, 40, ConvolutionMode::valid, false, 320);
  check_fused<float>(33, 1000, 25, ConvolutionMode::full);
  check_fused<double>(5, 700, 60, ConvolutionMode::same, true);
  check_fused<double>(9, 2000, 33, ConvolutionMode::full);
  // Circular rows that fill the FFT length move as pairs where a row starts on a pair's alignment: with an odd row
  // stride every other row does not, and takes the per-element path.
  check_fused<float>(3, 1024, 7, ConvolutionMode::circular, false, 1025);
  check_fused<double>(3, 1024, 7, ConvolutionMode::circular, false, 1025);
}

// Overlap-save: rows longer than any compiled kernel, or whose one FFT would cost more than segments of a shorter
// length, run as segments of a compiled length, each keeping the results no wrap-around reaches. Every mode and
// dtype, a kernel per row, padded and odd row strides (the per-element load path), a one-tap kernel (no overlap),
// segments whose last one ends inside and past the row. Route fused only: automatic keeps one FFT a row until the
// segments are measured. Needs a kernel of 4096 or shorter (CI's build has 4096).
TEST(ConvolutionGpu, FusedOverlapSaveSegments) {
  CUPLAN_REQUIRE_FUSED();
  int ran = 0;
  ran += check_fused<float>(4, 8192, 1025, ConvolutionMode::full, false, 0, "overlap-save");
  ran += check_fused<std::complex<float>>(3, 40000, 129, ConvolutionMode::same, false, 0, "overlap-save");
  ran += check_fused<std::complex<double>>(2, 30001, 300, ConvolutionMode::valid, true, 0, "overlap-save");
  ran += check_fused<double>(3, 50000, 64, ConvolutionMode::full, false, 50003, "overlap-save");
  ran += check_fused<float>(3, 60000, 1501, ConvolutionMode::same, true, 60001, "overlap-save");
  ran += check_fused<float>(2, 70001, 2, ConvolutionMode::valid, false, 0, "overlap-save");
  ran += check_fused<std::complex<float>>(2, 20000, 1, ConvolutionMode::full, false, 0, "overlap-save");
  if (ran == 0) GTEST_SKIP() << "this build compiled no fused kernel that holds these kernels' segments";
}

/// 2D and 3D convolutions on the fused route (forced; the column kernel along the first convolved axis) against the
/// reference, poisoned `out`; the operand unchanged afterwards (cuFFT may read it where it is).
template <class T, class K = T>
bool check_fused_columns(std::vector<std::int64_t> xs, std::vector<std::int64_t> ks, std::vector<int> axes,
                         ConvolutionMode mode, std::vector<std::int64_t> x_strides = {}) {
  SCOPED_TRACE(::testing::Message() << dtype_of<T>.name() << " x " << ::testing::PrintToString(xs) << " k "
                                    << ::testing::PrintToString(ks) << " " << to_string(mode));
  auto hx = HostArray<T>::random(xs, x_strides);
  auto hk = HostArray<K>::random(ks);
  Operand x = to_space(hx, Space::cuda);
  Operand k = to_space(hk, Space::cuda);
  std::optional<Convolution> made;
  try {
    made.emplace(x.view, k.view, ConvolutionOptions{.axes = axes, .mode = mode, .route = ConvolutionRoute::fused});
  } catch (const NotSupported& e) {
    if (std::string(e.what()).find("was compiled") != std::string::npos) return false;
    throw;
  }
  Convolution& conv = *made;
  conv.plan();
  EXPECT_EQ(conv.route(), ConvolutionRoute::fused);
  EXPECT_NE(conv.describe().find("inner axes"), std::string::npos) << conv.describe();
  EXPECT_NE(conv.describe().find("columns a block"), std::string::npos) << conv.describe();
  std::vector<int> ref_axes;
  for (int a : axes) ref_axes.push_back(a < 0 ? a + static_cast<int>(xs.size()) : a);
  const auto shape = convolution_shape(xs, ks, ref_axes, mode);
  Tensor out = poisoned(conv.result_dtype(), shape, Space::cuda);
  conv.execute({.out = out.view()});
  const auto expected = reference_convolution(hx.dense(), xs, hk.dense(), ks, ref_axes, mode);
  std::int64_t fft_size = 1;
  for (std::int64_t n : conv.fft_lengths()) fft_size *= n;
  EXPECT_LT(relative_error(to_dense(out.view()), expected), convolution_tolerance(conv.result_dtype(), fft_size))
      << conv.describe();
  EXPECT_EQ(to_dense(x.view), hx.dense()) << "the operand stays intact: " << conv.describe();
  return true;
}

TEST(ConvolutionGpu, FusedFirstAxisOf2DAnd3DConvolutions) {
  CUPLAN_REQUIRE_FUSED();
  // First-axis FFT lengths 256 and 512 (the default CUPLAN_FUSED_FFT_LENGTHS has both); a case whose length this
  // build did not compile is left out, and the test skips when every one is. The inner axes (cuFFT's) have column
  // counts that leave the last block's tile partly empty.
  int ran = 0;
  for (ConvolutionMode mode : {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid}) {
    ran += check_fused_columns<std::complex<float>>({2, 200, 30}, {1, 9, 7}, {1, 2}, mode);   // one kernel, 2D
    ran += check_fused_columns<std::complex<double>>({3, 250, 33}, {3, 7, 4}, {1, 2}, mode);  // one per entry
    ran += check_fused_columns<float, std::complex<float>>({300, 9, 12}, {11, 3, 5}, {0, 1, 2}, mode);  // 3D, mixed
  }
  ran += check_fused_columns<std::complex<double>>({2, 300, 6, 5}, {1, 13, 3, 2}, {1, 2, 3}, ConvolutionMode::same);
  // Real: R2C on the inner axes, the column kernel on their half spectrum, C2R.
  for (ConvolutionMode mode : {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid}) {
    ran += check_fused_columns<float>({2, 200, 30}, {1, 9, 7}, {1, 2}, mode);
    ran += check_fused_columns<double>({300, 9, 13}, {11, 3, 5}, {0, 1, 2}, mode);
    ran += check_fused_columns<float>({3, 250, 33}, {3, 7, 4}, {1, 2}, mode);  // one kernel per entry
  }
  ran += check_fused_columns<float>({3, 256, 20}, {1, 256, 20}, {1, 2}, ConvolutionMode::circular);  // direct C2R
  // Circular on dense operands: cuFFT reads the operand and writes the result directly, no pad or crop.
  ran += check_fused_columns<std::complex<float>>({4, 512, 30}, {1, 512, 5}, {1, 2}, ConvolutionMode::circular);
  ran += check_fused_columns<std::complex<float>>({256, 8, 16}, {256, 8, 16}, {0, 1, 2}, ConvolutionMode::circular);
  // The long first axes, taken in three passes (the split route: c64 8192 and 16384, c128 4096 and 8192) with 16 c64
  // or 8 c128 columns a block, partial groups, one kernel and one per entry, batch axes first; real f32 4096 (six
  // half-spectrum columns, four a block, one kernel) and 8192 (split, 21 half-spectrum columns).
  ran += check_fused_columns<std::complex<float>>({8192, 3}, {9, 2}, {0, 1}, ConvolutionMode::circular);
  ran += check_fused_columns<std::complex<float>>({16384, 5}, {3, 2}, {0, 1}, ConvolutionMode::circular);
  ran += check_fused_columns<std::complex<double>>({8192, 3}, {5, 3}, {0, 1}, ConvolutionMode::circular);
  ran += check_fused_columns<std::complex<double>>({2, 4096, 11}, {2, 5, 4}, {1, 2}, ConvolutionMode::circular);
  ran += check_fused_columns<std::complex<float>>({2, 5000, 37}, {1, 300, 5}, {1, 2}, ConvolutionMode::full);
  ran += check_fused_columns<std::complex<float>>({3, 8192, 20}, {3, 9, 4}, {1, 2}, ConvolutionMode::circular);
  ran += check_fused_columns<float>({4096, 10}, {7, 3}, {0, 1}, ConvolutionMode::circular);
  ran += check_fused_columns<float>({8192, 40}, {7, 5}, {0, 1}, ConvolutionMode::circular);
  // A strided operand (padded rows, batch axis last) reaches the work buffer through the pad kernel.
  ran +=
      check_fused_columns<std::complex<float>>({300, 20, 3}, {17, 4, 1}, {0, 1}, ConvolutionMode::full, {3, 1000, 1});
  if (ran == 0) GTEST_SKIP() << "this build compiled no fused kernel of length 256 or 512 (CUPLAN_FUSED_FFT_LENGTHS)";
}

/// 2D and 3D convolutions whose FFT shape (every length the next power of two) is a compiled whole-transform tile,
/// on the fused route (forced): one kernel, one block an entry. Against the reference with `out` poisoned, the
/// operand unchanged. Returns false where this build compiled no such tile (CUPLAN_FUSED_BLOCK_SHAPES).
template <class T, class K = T>
bool check_fused_block(std::vector<std::int64_t> xs, std::vector<std::int64_t> ks, std::vector<int> axes,
                       ConvolutionMode mode, std::vector<std::int64_t> x_strides = {}, Space space = Space::cuda) {
  SCOPED_TRACE(::testing::Message() << dtype_of<T>.name() << " * " << dtype_of<K>.name() << " x "
                                    << ::testing::PrintToString(xs) << " k " << ::testing::PrintToString(ks) << " "
                                    << to_string(mode) << (space == Space::cpu ? " host operands" : ""));
  auto hx = HostArray<T>::random(xs, x_strides);
  auto hk = HostArray<K>::random(ks);
  Operand x = to_space(hx, space);
  Operand k = to_space(hk, space);
  std::optional<Convolution> made;
  try {
    made.emplace(x.view, k.view,
                 ConvolutionOptions{
                     .axes = axes, .mode = mode, .route = ConvolutionRoute::fused, .execution = Execution::cuda()});
  } catch (const NotSupported& e) {
    if (std::string(e.what()).find("was compiled") != std::string::npos) return false;
    throw;
  }
  Convolution& conv = *made;
  if (conv.describe().find("whole") == std::string::npos) return false;  // the column route: no such tile
  conv.plan();
  EXPECT_EQ(conv.route(), ConvolutionRoute::fused);
  std::vector<int> ref_axes;
  for (int a : axes) ref_axes.push_back(a < 0 ? a + static_cast<int>(xs.size()) : a);
  const bool paired = !dtype_of<T>.is_complex() && !dtype_of<K>.is_complex() && product(ks) == [&] {
    std::int64_t c = 1;
    for (int a : ref_axes) c *= ks[static_cast<std::size_t>(a)];
    return c;
  }();
  EXPECT_EQ(conv.describe().find("two real batch entries") != std::string::npos, paired) << conv.describe();
  const auto shape = convolution_shape(xs, ks, ref_axes, mode);
  Tensor out = poisoned(conv.result_dtype(), shape, space);
  conv.execute({.out = out.view()});
  const auto expected = reference_convolution(hx.dense(), xs, hk.dense(), ks, ref_axes, mode);
  std::int64_t fft_size = 1;
  for (std::int64_t n : conv.fft_lengths()) {
    EXPECT_EQ(n & (n - 1), 0) << "a power of two: " << conv.describe();
    fft_size *= n;
  }
  EXPECT_LT(relative_error(to_dense(out.view()), expected), convolution_tolerance(conv.result_dtype(), fft_size))
      << conv.describe();
  EXPECT_EQ(to_dense(x.view), hx.dense()) << "the operand stays intact: " << conv.describe();
  return true;
}

TEST(ConvolutionGpu, FusedWholeTransformOf2DAnd3DTiles) {
  CUPLAN_REQUIRE_FUSED();
  // The default CUPLAN_FUSED_BLOCK_SHAPES tiles: 16x16, 32x32, 64x64, 128x128, 16x16x16 and 16x32x32; a case whose
  // tile this build did not compile is left out, and the test skips when every one is.
  int ran = 0;
  for (ConvolutionMode mode : {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid}) {
    ran += check_fused_block<std::complex<float>>({5, 40, 50}, {1, 9, 11}, {1, 2}, mode);  // 64x64, one kernel
    ran += check_fused_block<std::complex<double>>({3, 20, 27}, {3, 5, 6}, {1, 2}, mode);  // 32x32, one per entry
    ran += check_fused_block<float>({5, 50, 40}, {1, 9, 9}, {1, 2}, mode);                 // real, paired, an odd batch
    ran += check_fused_block<double>({3, 20, 20}, {3, 5, 5}, {1, 2}, mode);                // real, a kernel per entry
    ran += check_fused_block<float, std::complex<float>>({2, 12, 10, 14}, {1, 3, 5, 3}, {1, 2, 3}, mode);  // 16^3
  }
  // Circular (the operand's own power-of-two lengths), a kernel broadcast over one of two batch axes.
  ran += check_fused_block<std::complex<float>>({2, 3, 64, 64}, {1, 3, 64, 5}, {2, 3}, ConvolutionMode::circular);
  ran += check_fused_block<float>({16, 16, 16, 3}, {16, 4, 4, 1}, {0, 1, 2}, ConvolutionMode::circular);  // batch last
  // 16x32x32: 16384 c64 values, the largest tile.
  ran += check_fused_block<std::complex<float>>({2, 10, 20, 20}, {1, 5, 9, 9}, {1, 2, 3}, ConvolutionMode::full);
  // 128x128 c64 (one block an SM), the axes given in reverse order.
  ran += check_fused_block<std::complex<float>>({2, 100, 90}, {1, 29, 30}, {2, 1}, ConvolutionMode::full);
  // 16x16, the smallest tile; a batch of one.
  ran += check_fused_block<float>({1, 9, 12}, {1, 7, 5}, {1, 2}, ConvolutionMode::full);
  // Strided operands: padded rows, a batch axis between the convolved ones; host operands (the call blocks).
  ran += check_fused_block<std::complex<float>>({30, 3, 40}, {5, 1, 7}, {0, 2}, ConvolutionMode::same, {200, 60, 1});
  ran += check_fused_block<float>({4, 30, 30}, {1, 3, 3}, {1, 2}, ConvolutionMode::same, {1000, 31, 1}, Space::cpu);
  if (ran == 0) GTEST_SKIP() << "this build compiled no whole-transform tile (CUPLAN_FUSED_BLOCK_SHAPES)";
}

TEST(ConvolutionGpu, AutomaticRouteTakesTheFusedKernelWhereItApplies) {
  CUPLAN_REQUIRE_FUSED();
  Tensor x = Tensor::empty({64, 4000}, c64, Device::cuda(0));
  Tensor k = Tensor::empty({1, 97}, c64, Device::cuda(0));
  Convolution conv(x, k, {.axes = {1}, .mode = ConvolutionMode::same});
  if (conv.route() == ConvolutionRoute::fused) {
    EXPECT_EQ(conv.fft_lengths()[0], 4096);
    EXPECT_NE(conv.describe().find("cuFFTDx"), std::string::npos) << conv.describe();
  } else {
    EXPECT_NE(conv.describe().find("not fused"), std::string::npos) << conv.describe();
  }
  // A row longer than any compiled kernel: automatic keeps the separate route and says that route fused runs it as
  // overlap-save segments (FusedOverlapSaveSegments).
  Tensor xl = Tensor::empty({2, 40000}, c64, Device::cuda(0));
  Tensor kl = Tensor::empty({1, 129}, c64, Device::cuda(0));
  Convolution long_rows(xl, kl, {.mode = ConvolutionMode::same});
  EXPECT_EQ(long_rows.route(), ConvolutionRoute::separate);
  if (conv.route() == ConvolutionRoute::fused)  // a kernel of 4096 runs on this device
    EXPECT_NE(long_rows.describe().find("route fused runs it as overlap-save segments"), std::string::npos)
        << long_rows.describe();
  Convolution separate(x, k, {.mode = ConvolutionMode::same, .route = ConvolutionRoute::separate});
  EXPECT_EQ(separate.route(), ConvolutionRoute::separate);
  EXPECT_NE(separate.describe().find("cuFFT forward"), std::string::npos) << separate.describe();
  // 2D: automatic takes the column route up to 64 KiB a column where it was compiled (first axis 2048 here); at a
  // c128 column of 8192 it keeps the separate route and says why, and `fused` runs it (the split route).
  Tensor x2 = Tensor::empty({4, 1000, 64}, c64, Device::cuda(0));
  Tensor k2 = Tensor::empty({1, 97, 3}, c64, Device::cuda(0));
  Convolution two(x2, k2, {.axes = {1, 2}, .mode = ConvolutionMode::same});
  if (two.route() == ConvolutionRoute::fused) {
    EXPECT_EQ(two.fft_lengths()[0], 2048);
    EXPECT_NE(two.describe().find("chosen at plan"), std::string::npos) << two.describe();
    two.plan();  // the column kernel is chosen at plan
    EXPECT_NE(two.describe().find("one fused cuFFTDx kernel along axis 1 (4 columns a block"), std::string::npos)
        << two.describe();
  } else {
    EXPECT_NE(two.describe().find("was compiled"), std::string::npos) << two.describe();
  }
  Tensor xw = Tensor::empty({8192, 4}, c128, Device::cuda(0));
  Tensor kw = Tensor::empty({3, 3}, c128, Device::cuda(0));
  Convolution wide(xw, kw, {.mode = ConvolutionMode::circular});
  EXPECT_EQ(wide.route(), ConvolutionRoute::separate);
  EXPECT_NE(wide.describe().find("has not been measured"), std::string::npos) << wide.describe();
  std::optional<Convolution> forced;
  CUPLAN_SKIP_IF_NOT_COMPILED(
      forced.emplace(xw, kw, ConvolutionOptions{.mode = ConvolutionMode::circular, .route = ConvolutionRoute::fused}));
  EXPECT_EQ(forced->route(), ConvolutionRoute::fused);
  forced->plan();
  EXPECT_NE(forced->describe().find("three fused cuFFTDx passes"), std::string::npos) << forced->describe();
}

TEST(ConvolutionGpu, ForcingTheFusedRouteWhereItCannotApplyNamesTheReason) {
  CUPLAN_REQUIRE_GPU();
  Tensor x2 = Tensor::empty({64, 300}, f32, Device::cuda(0));
  Tensor k2 = Tensor::empty({3, 3}, f32, Device::cuda(0));
  const ConvolutionOptions fused{.route = ConvolutionRoute::fused};
  expect_throw_naming<NotSupported>([&] { Convolution(x2, k2, fused); }, {"fused", "128", "axis 0", "256"});
  Tensor xa = Tensor::empty({300, 8}, c64, Device::cuda(0));
  Tensor ka = Tensor::empty({5, 1}, c64, Device::cuda(0));
  expect_throw_naming<NotSupported>([&] { Convolution(xa, ka, fused); }, {"fused", "last axis", "axis 0"});
  Tensor xr = Tensor::empty({4, 1000}, f32, Device::cuda(0));
  Tensor kr = Tensor::empty({1, 9}, c64, Device::cuda(0));
  expect_throw_naming<NotSupported>([&] { Convolution(xr, kr, fused); }, {"fused", "alike", "f32", "c64"});
  Tensor xl = Tensor::empty({2, 40000}, c64, Device::cuda(0));
  Tensor kl = Tensor::empty({1, 20000}, c64, Device::cuda(0));  // no segment of 16384 or less holds it
  expect_throw_naming<NotSupported>([&] { Convolution(xl, kl, fused); }, {"fused", "65536", "16384"});
  // A c128 column of 16384 does not fit the column kernel's tile.
  Tensor xw = Tensor::empty({16384, 2}, c128, Device::cuda(0));
  Tensor kw = Tensor::empty({3, 2}, c128, Device::cuda(0));
  const ConvolutionOptions fused_circular{.mode = ConvolutionMode::circular, .route = ConvolutionRoute::fused};
  if (CUPLAN_HAS_FUSED_FFT)
    expect_throw_naming<NotSupported>([&] { Convolution(xw, kw, fused_circular); }, {"fused", "16384", "c128", "8192"});
  Tensor xc = Tensor::empty({2, 1024}, c64, Device::cuda(0));
  Tensor kc = Tensor::empty({1, 9}, c64, Device::cuda(0));
  if (!CUPLAN_HAS_FUSED_FFT)
    expect_throw_naming<NotSupported>([&] { Convolution(xc, kc, fused); }, {"fused", "MathDx"});
}

TEST(ConvolutionGpu, FusedAndSeparateRoutesAgreeOnALargeCase) {
  CUPLAN_REQUIRE_FUSED();
  auto hx = HostArray<std::complex<float>>::random({256, 4000});
  auto hk = HostArray<std::complex<float>>::random({1, 97});
  Operand x = to_space(hx, Space::cuda);
  Operand k = to_space(hk, Space::cuda);
  std::optional<Convolution> made;
  CUPLAN_SKIP_IF_NOT_COMPILED(made.emplace(
      x.view, k.view, ConvolutionOptions{.mode = ConvolutionMode::same, .route = ConvolutionRoute::fused}));
  Convolution& fused = *made;
  Convolution separate(x.view, k.view, {.mode = ConvolutionMode::same, .route = ConvolutionRoute::separate});
  fused.plan();
  separate.plan();
  const Tensor a = fused.execute();
  const Tensor b = separate.execute();
  EXPECT_LT(relative_error(to_dense(a.view()), to_dense(b.view())), 1e-5);
}

/// Both routes under the stream contract (the separate one everywhere; the fused one where the build has it).
class ConvolutionGpuStreams : public ::testing::TestWithParam<ConvolutionRoute> {
 protected:
  void SetUp() override {
    CUPLAN_REQUIRE_GPU();
    if (GetParam() == ConvolutionRoute::fused && !CUPLAN_HAS_FUSED_FFT)
      GTEST_SKIP() << "this build has no fused kernels (MathDx not found)";
  }
};

TEST_P(ConvolutionGpuStreams, PlanExecuteAndResetOperandAcrossTwoStreams) {
  Stream s1, s2;
  auto hx = HostArray<std::complex<float>>::random({32, 1000});
  auto hk = HostArray<std::complex<float>>::random({1, 25});
  Operand x = to_space(hx, Space::cuda, s1);
  Operand k = to_space(hk, Space::cuda, s1);
  std::optional<Convolution> made;
  CUPLAN_SKIP_IF_NOT_COMPILED(made.emplace(
      x.view, k.view, ConvolutionOptions{.mode = ConvolutionMode::same, .route = GetParam(), .stream = s1}));
  Convolution& conv = *made;
  spin(s1);  // the kernel's upload is late: plan (on s1) must read it after the spin
  conv.plan(s1);
  Tensor y = conv.execute({.stream = s1});
  // y becomes the next operand, on s2, with no user ordering: the object orders s2 after its phase on s1.
  conv.reset_operand(y, s2);
  Tensor z = conv.execute({.stream = s2});
  s2.synchronize();
  const auto once = reference_convolution(hx.dense(), hx.shape, hk.dense(), hk.shape, {1}, ConvolutionMode::same);
  const auto twice = reference_convolution(once, hx.shape, hk.dense(), hk.shape, {1}, ConvolutionMode::same);
  EXPECT_LT(relative_error(to_dense(z.view()), twice), 1e-4) << conv.describe();
}

TEST_P(ConvolutionGpuStreams, ResetKernelOnAnotherStreamOrdersTheNextExecute) {
  Stream s1, s2;
  auto hx = HostArray<float>::random({16, 2000});
  auto hk = HostArray<float>::random({1, 49});
  auto hk2 = HostArray<float>::random({1, 49});
  Operand x = to_space(hx, Space::cuda, s1);
  Operand k = to_space(hk, Space::cuda, s1);
  Operand k2 = to_space(hk2, Space::cuda, s2);
  std::optional<Convolution> made;
  CUPLAN_SKIP_IF_NOT_COMPILED(made.emplace(x.view, k.view, ConvolutionOptions{.route = GetParam(), .stream = s1}));
  Convolution& conv = *made;
  conv.plan();
  spin(s2);
  conv.reset_kernel(k2.view, s2);  // after the spin on s2
  Tensor y = conv.execute({.stream = s1});
  s1.synchronize();
  const auto expected = reference_convolution(hx.dense(), hx.shape, hk2.dense(), hk2.shape, {1}, ConvolutionMode::full);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), 1e-5) << conv.describe();
}

TEST_P(ConvolutionGpuStreams, FunctionFormOnAStreamWithAfterEvents) {
  Stream s1, s2;
  auto hx = HostArray<std::complex<double>>::random({8, 700});
  auto hk = HostArray<std::complex<double>>::random({1, 60});
  Operand x = to_space(hx, Space::cuda, s1);
  Operand k = to_space(hk, Space::cuda, s1);
  spin(s1);
  const Event ready = s1.record();
  Tensor y;
  CUPLAN_SKIP_IF_NOT_COMPILED(
      y = fftconvolve(x.view, k.view,
                      {.mode = ConvolutionMode::valid, .route = GetParam(), .stream = s2, .after = {ready}}));
  s2.synchronize();
  const auto expected = reference_convolution(hx.dense(), hx.shape, hk.dense(), hk.shape, {1}, ConvolutionMode::valid);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Routes, ConvolutionGpuStreams,
                         ::testing::Values(ConvolutionRoute::separate, ConvolutionRoute::fused),
                         [](const ::testing::TestParamInfo<ConvolutionRoute>& route) {
                           return std::string(to_string(route.param));
                         });

}  // namespace
}  // namespace cuplan::testing
