// SPDX-License-Identifier: Apache-2.0
// The distributed transform simulated on the CPU: every rank's box as a host array, local DFTs along the step's axes,
// exchanges that pack, hand over and unpack exactly as plan_exchange and local_offset describe. The gathered result
// must equal the DFT of the whole array, for slab and every pencil grid on 1 to 8 ranks, C2C, R2C and C2R, natural
// and transposed layouts, odd extents. This checks that the step sequence, the boxes and the exchange pieces compose
// into the right transform without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "distributed/decomposition.hpp"

namespace dist = cuplan::detail::dist;
using cplx = std::complex<double>;
using Shape3 = std::array<std::int64_t, 3>;

namespace {

struct Local {
  dist::Box box;
  std::vector<cplx> data;  // row-major over box
};

// DFT along `axis` of a row-major array of shape n (sign -1 forward). `out_len` < n keeps the first out_len outputs
// (R2C); `in_len` < n reads a Hermitian half-spectrum of in_len values (C2R, real part kept).
std::vector<cplx> dft_axis(const std::vector<cplx>& in, Shape3& n, int axis, int sign, std::int64_t full, bool r2c,
                           bool c2r) {
  Shape3 out_n = n;
  out_n[axis] = r2c ? full / 2 + 1 : full;
  std::vector<cplx> out(static_cast<std::size_t>(out_n[0] * out_n[1] * out_n[2]));
  auto at = [](const Shape3& s, std::int64_t i, std::int64_t j, std::int64_t k) { return (i * s[1] + j) * s[2] + k; };
  for (std::int64_t i = 0; i < out_n[0]; ++i)
    for (std::int64_t j = 0; j < out_n[1]; ++j)
      for (std::int64_t k = 0; k < out_n[2]; ++k) {
        std::array<std::int64_t, 3> idx{i, j, k};
        const std::int64_t q = idx[axis];
        cplx sum = 0;
        for (std::int64_t p = 0; p < full; ++p) {
          idx[axis] = p;
          cplx v;
          if (c2r && p >= n[axis]) {
            std::array<std::int64_t, 3> mirror = idx;
            mirror[axis] = full - p;
            v = std::conj(in[static_cast<std::size_t>(at(n, mirror[0], mirror[1], mirror[2]))]);
          } else {
            v = in[static_cast<std::size_t>(at(n, idx[0], idx[1], idx[2]))];
          }
          sum += v * std::polar(1.0, sign * 2 * std::numbers::pi * static_cast<double>(p * q) / full);
        }
        out[static_cast<std::size_t>(at(out_n, i, j, k))] = c2r ? cplx(sum.real(), 0) : sum;
      }
  n = out_n;
  return out;
}

std::vector<cplx> pack_box(const Local& from, const dist::Box& piece) {
  std::vector<cplx> out;
  for (std::int64_t i = 0; i < piece.n[0]; ++i)
    for (std::int64_t j = 0; j < piece.n[1]; ++j)
      for (std::int64_t k = 0; k < piece.n[2]; ++k)
        out.push_back(from.data[static_cast<std::size_t>(
            dist::local_offset(from.box, {piece.lo[0] + i, piece.lo[1] + j, piece.lo[2] + k}))]);
  return out;
}

void run(const dist::Layout& layout, dist::Type type, bool tin, bool tout, Shape3 real) {
  const int ndim = layout.ndim;
  const int ranks = layout.ranks();
  const int last_axis = ndim - 1;
  Shape3 cshape = real;
  if (type != dist::Type::c2c) cshape[last_axis] = real[last_axis] / 2 + 1;
  const int sign = type == dist::Type::c2r ? +1 : -1;
  // Global input and the reference: transform every axis of the whole array (real side last for C2R).
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  Shape3 in_shape = type == dist::Type::r2c ? real : cshape;
  std::vector<cplx> global(static_cast<std::size_t>(in_shape[0] * in_shape[1] * in_shape[2]));
  for (auto& v : global) v = type == dist::Type::r2c ? cplx(u(rng), 0) : cplx(u(rng), u(rng));
  if (type == dist::Type::c2r) {  // a Hermitian spectrum: the R2C of real data
    std::vector<cplx> x(static_cast<std::size_t>(real[0] * real[1] * real[2]));
    for (auto& v : x) v = cplx(u(rng), 0);
    Shape3 n = real;
    global = dft_axis(x, n, last_axis, -1, real[last_axis], true, false);
    for (int a = 0; a < last_axis; ++a) global = dft_axis(global, n, a, -1, real[a], false, false);
  }
  std::vector<cplx> want = global;
  {
    Shape3 n = in_shape;
    if (type == dist::Type::r2c) want = dft_axis(want, n, last_axis, sign, real[last_axis], true, false);
    for (int a = 0; a < ndim; ++a)
      if (a != last_axis || type == dist::Type::c2c) want = dft_axis(want, n, a, sign, real[a], false, false);
    if (type == dist::Type::c2r) want = dft_axis(want, n, last_axis, sign, real[last_axis], false, true);
  }
  // Scatter.
  const int last_stage = layout.stages() - 1;
  std::vector<Local> locals(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    Local& l = locals[static_cast<std::size_t>(r)];
    l.box = dist::stage_box(layout, in_shape, tin ? last_stage : 0, r);
    dist::Box whole;
    whole.ndim = ndim;
    whole.n = in_shape;
    l.data = pack_box({whole, global}, l.box);
  }
  for (const dist::Step& step : dist::pipeline(layout, type, tin, tout)) {
    if (step.op == dist::Step::Op::exchange) {
      std::vector<dist::Exchange> ex;
      for (int r = 0; r < ranks; ++r) ex.push_back(dist::plan_exchange(layout, cshape, step.stage, step.to, r));
      std::vector<Local> next(static_cast<std::size_t>(ranks));
      for (int r = 0; r < ranks; ++r) {
        Local& dst = next[static_cast<std::size_t>(r)];
        dst.box = dist::stage_box(layout, cshape, step.to, r);
        dst.data.assign(static_cast<std::size_t>(dst.box.numel()), cplx(NAN, NAN));
        for (const dist::Piece& recv : ex[static_cast<std::size_t>(r)].recvs) {
          const auto piece = pack_box(locals[static_cast<std::size_t>(recv.peer)], recv.box);
          std::size_t e = 0;
          for (std::int64_t i = 0; i < recv.box.n[0]; ++i)
            for (std::int64_t j = 0; j < recv.box.n[1]; ++j)
              for (std::int64_t k = 0; k < recv.box.n[2]; ++k)
                dst.data[static_cast<std::size_t>(dist::local_offset(
                    dst.box, {recv.box.lo[0] + i, recv.box.lo[1] + j, recv.box.lo[2] + k}))] = piece[e++];
        }
      }
      locals = std::move(next);
      continue;
    }
    for (Local& l : locals) {
      Shape3 n = l.box.n;
      const bool r2c = step.real_side && type == dist::Type::r2c;
      const bool c2r = step.real_side && type == dist::Type::c2r;
      if (r2c) l.data = dft_axis(l.data, n, last_axis, sign, real[last_axis], true, false);
      for (int a : step.axes)
        if (!((r2c || c2r) && a == last_axis)) l.data = dft_axis(l.data, n, a, sign, real[a], false, false);
      if (c2r) l.data = dft_axis(l.data, n, last_axis, sign, real[last_axis], false, true);
      l.box.n = n;
    }
  }
  // Gather and compare.
  const Shape3 out_shape = type == dist::Type::c2r ? real : cshape;
  double err = 0, norm = 0;
  for (int r = 0; r < ranks; ++r) {
    const Local& l = locals[static_cast<std::size_t>(r)];
    ASSERT_EQ(l.box, dist::stage_box(layout, out_shape, tout ? last_stage : 0, r));
    for (std::int64_t i = 0; i < l.box.n[0]; ++i)
      for (std::int64_t j = 0; j < l.box.n[1]; ++j)
        for (std::int64_t k = 0; k < l.box.n[2]; ++k) {
          const std::int64_t g = ((l.box.lo[0] + i) * out_shape[1] + l.box.lo[1] + j) * out_shape[2] + l.box.lo[2] + k;
          const cplx got = l.data[static_cast<std::size_t>((i * l.box.n[1] + j) * l.box.n[2] + k)];
          err += std::norm(got - want[static_cast<std::size_t>(g)]);
          norm += std::norm(want[static_cast<std::size_t>(g)]);
        }
  }
  EXPECT_LT(std::sqrt(err / norm), 1e-12)
      << dist::describe(layout) << " type " << static_cast<int>(type) << " tin " << tin << " tout " << tout;
}

}  // namespace

TEST(PipelineSimulation, GatheredResultEqualsTheWholeArrayDft) {
  int runs = 0;
  for (int ranks = 1; ranks <= 8; ++ranks) {
    std::vector<dist::Layout> layouts{{dist::Kind::slab, 3, ranks, 1}, {dist::Kind::slab, 2, ranks, 1}};
    for (int rows = 1; rows <= ranks; ++rows)
      if (ranks % rows == 0) layouts.push_back({dist::Kind::pencil, 3, rows, ranks / rows});
    for (const auto& layout : layouts) {
      const Shape3 shape = layout.ndim == 2 ? Shape3{9, 18, 1} : Shape3{9, 10, 17};
      for (auto type : {dist::Type::c2c, dist::Type::r2c, dist::Type::c2r})
        for (bool tin : {false, true})
          for (bool tout : {false, true}) {
            if ((type == dist::Type::r2c && tin) || (type == dist::Type::c2r && tout) || (tin && tout)) continue;
            run(layout, type, tin, tout, shape);
            ++runs;
          }
    }
  }
  EXPECT_GT(runs, 200);
}
