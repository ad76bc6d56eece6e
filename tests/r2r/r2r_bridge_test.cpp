// SPDX-License-Identifier: Apache-2.0
// The bridge of one axis's post-pass into the next axis's FFT input (src/r2r/cufft/r2r_kernels.cu, R2RBridge), checked
// on the CPU: two axes of a 3-D array, the first on its passes around FFTW's DFT, its post-pass stored through
// r2r_bridge_layout() and r2r_type2_scatter() as the bridge kernel stores it, the next axis's FFT and post-pass on
// that buffer, against the float64 reference of both axes (scipy's definitions, orthogonalize included). And the
// scatter alone against the pre-pass it replaces.

#include <fftw3.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "r2r/algorithms.hpp"
#include "r2r/cufft/r2r_rows.hpp"
#include "r2r/planner.hpp"
#include "r2r_reference.hpp"

namespace {

using cuplan::R2RKind;
using cuplan::detail::AxisAlgorithm;
using cuplan::detail::R2RFftType;
using cuplan::detail::R2RRowView;

TEST(R2RBridge, TheTypeTwoScatterPutsEveryElementWhereThePrePassLoadsIt) {
  for (std::int64_t n : {1, 2, 3, 4, 5, 8, 9, 16, 17, 100, 1009}) {
    for (bool sine : {false, true}) {
      const AxisAlgorithm al = cuplan::detail::choose_algorithm(sine ? R2RKind::dst2 : R2RKind::dct2, n);
      const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n + 5));
      std::vector<double> gathered(static_cast<std::size_t>(n), 1e300), scattered(static_cast<std::size_t>(n), 1e300);
      for (std::int64_t j = 0; j < al.pre_items; ++j)
        cuplan::detail::r2r_pre_item<double>(
            al, j, [&](std::int64_t i) { return x.at(static_cast<std::size_t>(i)); }, gathered.data());
      std::vector<int> hits(static_cast<std::size_t>(n), 0);
      for (std::int64_t i = 0; i < n; ++i) {
        const cuplan::detail::R2RScatter to = cuplan::detail::r2r_type2_scatter(n, sine, i);
        ASSERT_GE(to.j, 0);
        ASSERT_LT(to.j, n);
        scattered[static_cast<std::size_t>(to.j)] =
            to.negate ? -x[static_cast<std::size_t>(i)] : x[static_cast<std::size_t>(i)];
        ++hits[static_cast<std::size_t>(to.j)];
      }
      for (std::int64_t j = 0; j < n; ++j) {
        EXPECT_EQ(hits[static_cast<std::size_t>(j)], 1) << "n " << n << " sine " << sine << " j " << j;
        EXPECT_EQ(scattered[static_cast<std::size_t>(j)], gathered[static_cast<std::size_t>(j)])
            << "n " << n << " sine " << sine << " j " << j;
      }
    }
  }
}

// Row-major strides of `shape`.
std::vector<std::int64_t> row_major(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (int a = static_cast<int>(shape.size()) - 2; a >= 0; --a) stride[a] = stride[a + 1] * shape[a + 1];
  return stride;
}

// The coordinates of row `row` of the axis `skip` (the other axes of extent > 1, outermost first, the last fastest),
// as the passes number them, with index 0 on `skip`.
std::vector<std::int64_t> row_coordinates(const std::vector<std::int64_t>& shape, int skip, std::int64_t row) {
  std::vector<std::int64_t> c(shape.size(), 0);
  for (int a = static_cast<int>(shape.size()) - 1; a >= 0; --a) {
    if (a == skip || shape[a] == 1) continue;
    c[a] = row % shape[a];
    row /= shape[a];
  }
  return c;
}

// One FFT per row of `al` from `in` into `out`, the rows laid out as the passes lay them out (interleaved: element j
// of row r at j * rows + r; else one after another).
void run_dfts(const AxisAlgorithm& al, std::int64_t rows, bool interleaved, std::vector<double>& in,
              std::vector<double>& out) {
  const int len = static_cast<int>(al.fft_length);
  const int howmany = static_cast<int>(rows);
  const bool in_complex = al.fft != R2RFftType::r2c, out_complex = al.fft != R2RFftType::c2r;
  const int in_dist = interleaved ? 1 : static_cast<int>(in_complex ? al.a_scalars / 2 : al.a_scalars);
  const int out_dist = interleaved ? 1 : static_cast<int>(out_complex ? al.b_scalars / 2 : al.b_scalars);
  const int stride = interleaved ? howmany : 1;
  auto* in_c = reinterpret_cast<fftw_complex*>(in.data());
  auto* out_c = reinterpret_cast<fftw_complex*>(out.data());
  fftw_plan p = nullptr;
  if (al.fft == R2RFftType::r2c)
    p = fftw_plan_many_dft_r2c(1, &len, howmany, in.data(), nullptr, stride, in_dist, out_c, nullptr, stride, out_dist,
                               FFTW_ESTIMATE);
  else if (al.fft == R2RFftType::c2r)
    p = fftw_plan_many_dft_c2r(1, &len, howmany, in_c, nullptr, stride, in_dist, out.data(), nullptr, stride, out_dist,
                               FFTW_ESTIMATE);
  else
    p = fftw_plan_many_dft(1, &len, howmany, in_c, nullptr, stride, in_dist, out_c, nullptr, stride, out_dist,
                           FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
}

R2RRowView<double> row_view(std::vector<double>& v, std::int64_t row, std::int64_t rows, std::int64_t scalars,
                            bool complex, bool interleaved) {
  if (!interleaved) return {v.data() + row * scalars, complex ? 2 : 1, complex};
  return {v.data() + (complex ? 2 : 1) * row, (complex ? 2 : 1) * rows, complex};
}

// Axis `first` (kind `k1`) then axis `next` (DCT-II or DST-II) of `x`, the first one's post-pass bridged into the
// next one's FFT input; orthogonalize's factors as the route applies them (norm backward).
std::vector<double> bridged(const std::vector<double>& x, const std::vector<std::int64_t>& shape, int first, int next,
                            R2RKind k1, R2RKind k2, bool orthogonalize) {
  const int ndim = static_cast<int>(shape.size());
  const std::vector<std::int64_t> stride = row_major(shape);
  const auto edges = [&](R2RKind k) {
    return orthogonalize ? cuplan::detail::orthogonal_edges(k) : cuplan::detail::EdgeScaling{};
  };
  const AxisAlgorithm al1 = cuplan::detail::choose_algorithm(k1, shape[first]);
  const AxisAlgorithm al2 = cuplan::detail::choose_algorithm(k2, shape[next]);
  const std::int64_t total = static_cast<std::int64_t>(x.size());
  const std::int64_t rows1 = total / shape[first], rows2 = total / shape[next];
  // The passes interleave the rows of every axis but the innermost.
  const bool inter1 = first != ndim - 1 && rows1 > 1, inter2 = next != ndim - 1 && rows2 > 1;
  const cuplan::detail::EdgeScaling e1 = edges(k1), e2 = edges(k2);
  // First axis: pre-pass from x, DFT.
  std::vector<double> a1(static_cast<std::size_t>(rows1 * al1.a_scalars), 1e300);
  std::vector<double> b1(static_cast<std::size_t>(rows1 * al1.b_scalars), 1e300);
  for (std::int64_t r = 0; r < rows1; ++r) {
    const std::vector<std::int64_t> c = row_coordinates(shape, first, r);
    std::int64_t base = 0;
    for (int a = 0; a < ndim; ++a) base += c[a] * stride[a];
    const auto load = [&](std::int64_t i) {
      double v = x.at(static_cast<std::size_t>(base + i * stride[first]));
      if (i == 0) v *= e1.pre_first;
      if (i == al1.n - 1) v *= e1.pre_last;
      return v;
    };
    for (std::int64_t j = 0; j < al1.pre_items; ++j)
      cuplan::detail::r2r_pre_item<double>(al1, j, load,
                                           row_view(a1, r, rows1, al1.a_scalars, al1.fft != R2RFftType::r2c, inter1));
  }
  run_dfts(al1, rows1, inter1, a1, b1);
  // The bridge: the first axis's post-pass stored into the next axis's FFT input, as the bridge kernel stores it.
  const cuplan::detail::R2RBridgeLayout layout =
      cuplan::detail::r2r_bridge_layout(shape.data(), ndim, first, next, inter2, al2.a_scalars);
  EXPECT_EQ(layout.rows.rows, rows1);
  std::vector<double> a2(static_cast<std::size_t>(rows2 * al2.a_scalars), 1e300);
  std::vector<int> hits(a2.size(), 0);
  for (std::int64_t r = 0; r < rows1; ++r) {
    std::int64_t next_index = 0, offset = 0;
    cuplan::detail::r2r_row_offsets(layout.rows, r, next_index, offset);
    EXPECT_EQ(next_index, row_coordinates(shape, first, r)[static_cast<std::size_t>(next)]);
    const cuplan::detail::R2RScatter to = cuplan::detail::r2r_type2_scatter(al2.n, al2.sine, next_index);
    double row_factor = to.negate ? -1.0 : 1.0;
    if (next_index == 0) row_factor *= e2.pre_first;
    if (next_index == al2.n - 1) row_factor *= e2.pre_last;
    const auto store = [&](std::int64_t i, double v) {
      double f = row_factor;
      if (i == 0) f *= e1.post_first;
      if (i == al1.n - 1) f *= e1.post_last;
      const std::int64_t at = offset + to.j * layout.column_stride + i * layout.axis_stride;
      a2.at(static_cast<std::size_t>(at)) = v * f;
      ++hits.at(static_cast<std::size_t>(at));
    };
    for (std::int64_t k = 0; k < al1.post_items; ++k)
      cuplan::detail::r2r_post_item<double>(
          al1, k, row_view(b1, r, rows1, al1.b_scalars, al1.fft != R2RFftType::c2r, inter1), store);
  }
  for (std::size_t s = 0; s < hits.size(); ++s) EXPECT_EQ(hits[s], 1) << "next axis's FFT input scalar " << s;
  // Next axis: DFT, post-pass into the result.
  std::vector<double> b2(static_cast<std::size_t>(rows2 * al2.b_scalars), 1e300);
  run_dfts(al2, rows2, inter2, a2, b2);
  std::vector<double> y(x.size(), 1e300);
  for (std::int64_t r = 0; r < rows2; ++r) {
    const std::vector<std::int64_t> c = row_coordinates(shape, next, r);
    std::int64_t base = 0;
    for (int a = 0; a < ndim; ++a) base += c[a] * stride[a];
    const auto store = [&](std::int64_t i, double v) {
      double f = 1.0;
      if (i == 0) f *= e2.post_first;
      if (i == al2.n - 1) f *= e2.post_last;
      y.at(static_cast<std::size_t>(base + i * stride[next])) = v * f;
    };
    for (std::int64_t k = 0; k < al2.post_items; ++k)
      cuplan::detail::r2r_post_item<double>(al2, k, row_view(b2, r, rows2, al2.b_scalars, true, inter2), store);
  }
  return y;
}

TEST(R2RBridge, TwoAxesThroughTheBridgeMatchTheDirectSums) {
  const std::vector<std::vector<std::int64_t>> shapes = {{5, 6, 4}, {3, 8, 7}, {4, 1, 9}, {2, 3, 2}};
  const R2RKind all[] = {R2RKind::dct1, R2RKind::dct2, R2RKind::dct3, R2RKind::dct4,
                         R2RKind::dst1, R2RKind::dst2, R2RKind::dst3, R2RKind::dst4};
  int checked = 0;
  for (const auto& shape : shapes)
    for (int first = 0; first < 3; ++first)
      for (int next = 0; next < 3; ++next) {
        if (next == first) continue;
        for (R2RKind k1 : all)
          for (R2RKind k2 : {R2RKind::dct2, R2RKind::dst2})
            for (bool orthogonalize : {false, true}) {
              if (k1 == R2RKind::dct1 && shape[first] < 2) continue;
              std::int64_t total = 1;
              for (std::int64_t e : shape) total *= e;
              const auto x = r2r_test::random_vector(static_cast<std::size_t>(total),
                                                     static_cast<std::uint32_t>(total + first * 7 + next));
              const auto reference = r2r_test::scipy_nd(x, shape, {first, next}, {k1, k2}, cuplan::R2RNorm::backward,
                                                        orthogonalize, false);
              EXPECT_LE(r2r_test::relative_error(bridged(x, shape, first, next, k1, k2, orthogonalize), reference),
                        1e-13)
                  << "shape [" << shape[0] << ", " << shape[1] << ", " << shape[2] << "] axes " << first << " -> "
                  << next << " " << cuplan::to_string(k1) << " -> " << cuplan::to_string(k2) << " orthogonalize "
                  << orthogonalize;
              ++checked;
            }
      }
  EXPECT_GT(checked, 500);
}

}  // namespace
