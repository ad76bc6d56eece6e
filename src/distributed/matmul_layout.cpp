// SPDX-License-Identifier: Apache-2.0
#include "distributed/matmul_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail::dist {

namespace {

Box box2(std::int64_t r0, std::int64_t rows, std::int64_t c0, std::int64_t cols) {
  Box b;
  b.ndim = 2;
  b.lo = {r0, c0, 0};
  b.n = {rows, cols, 1};
  return b;
}

std::vector<LocalArray> arrays_of(const MatrixSpec& spec, std::int64_t rows, std::int64_t cols, int ranks,
                                  bool transpose) {
  std::vector<LocalArray> out;
  for (int r = 0; r < ranks; ++r) {
    LocalArray a = transpose ? transposed(matrix_array(spec, rows, cols, r)) : matrix_array(spec, rows, cols, r);
    out.push_back(std::move(a));
  }
  return out;
}

// Two local arrays put every element they hold at the same local position (block-cyclic on one rank is the
// whole matrix, in many parts).
bool same_layout(const LocalArray& x, const LocalArray& y) {
  if (x == y) return true;
  if (x.shape != y.shape) return false;
  std::int64_t common = 0, held = 0;
  for (const Placement& p : x.parts) held += p.global.numel();
  for (const Placement& p : x.parts)
    for (const Placement& q : y.parts) {
      const Box c = intersect(p.global, q.global);
      if (c.empty()) continue;
      for (std::size_t d = 0; d < 3; ++d)
        if (p.global.lo[d] - p.local_lo[d] != q.global.lo[d] - q.local_lo[d]) return false;
      common += c.numel();
    }
  std::int64_t held_y = 0;
  for (const Placement& q : y.parts) held_y += q.global.numel();
  return common == held && held == held_y;
}

bool same_layouts(const std::vector<LocalArray>& x, const std::vector<LocalArray>& y) {
  for (std::size_t r = 0; r < x.size(); ++r)
    if (!same_layout(x[r], y[r])) return false;
  return true;
}

int block_of(std::int64_t extent, int parts, std::int64_t index) {
  for (int i = 0; i < parts; ++i) {
    const Block b = split(extent, parts, i);
    if (index >= b.offset && index < b.offset + b.size) return i;
  }
  return parts - 1;
}

std::array<int, 2> summa_grid(const Problem& p) {
  if (p.d.dist == Dist::grid || p.d.dist == Dist::block_cyclic) return {p.d.rows, p.d.cols};
  return square_grid(p.ranks);
}

}  // namespace

std::array<int, 2> square_grid(int ranks) {
  int rows = static_cast<int>(std::sqrt(static_cast<double>(ranks)));
  while (rows > 1 && ranks % rows != 0) --rows;
  return {std::max(rows, 1), ranks / std::max(rows, 1)};
}

MatrixSpec resolve_spec(Dist dist, std::array<int, 2> grid, std::array<std::int64_t, 2> block, int ranks,
                        const char* what) {
  MatrixSpec s;
  s.dist = dist;
  switch (dist) {
    case Dist::row_blocks:
      s.rows = ranks;
      break;
    case Dist::column_blocks:
      s.cols = ranks;
      break;
    case Dist::grid:
    case Dist::block_cyclic: {
      const std::array<int, 2> g = grid[0] == 0 && grid[1] == 0 ? square_grid(ranks) : grid;
      if (g[0] < 1 || g[1] < 1 || std::int64_t{g[0]} * g[1] != ranks)
        throw InvalidArgument(
            fmt::format("{}.process_grid: expected rows x cols = {} ranks (or {{0, 0}}: chosen), "
                        "got {}x{}",
                        what, ranks, grid[0], grid[1]));
      s.rows = g[0];
      s.cols = g[1];
      if (dist == Dist::block_cyclic) {
        s.mb = block[0] == 0 ? 256 : block[0];
        s.nb = block[1] == 0 ? 256 : block[1];
        if (s.mb < 1 || s.nb < 1)
          throw InvalidArgument(
              fmt::format("{}.block: expected positive block extents (or {{0, 0}}: 256 x 256), got "
                          "{}x{}",
                          what, block[0], block[1]));
      }
      break;
    }
    default:
      throw InvalidArgument(
          fmt::format("{}.distribution: expected row_blocks, column_blocks, grid or block_cyclic, "
                      "got the value {}",
                      what, static_cast<int>(dist)));
  }
  return s;
}

void check_block_count(const MatrixSpec& spec, std::int64_t rows, std::int64_t cols, const char* what) {
  if (spec.dist != Dist::block_cyclic || rows < 1 || cols < 1) return;
  const std::int64_t block_rows = (rows - 1) / spec.mb + 1, block_cols = (cols - 1) / spec.nb + 1;
  if (block_rows <= max_block_cyclic_blocks / block_cols) return;
  const std::string count = block_rows <= std::numeric_limits<std::int64_t>::max() / block_cols
                                ? fmt::format(" = {}", block_rows * block_cols)
                                : std::string();
  throw InvalidArgument(
      fmt::format("{}.block: blocks of {}x{} cut the stored {}x{} matrix into {} x {}{} blocks; expected at most {} "
                  "(each block is listed and moved as a copy of its own): use larger blocks",
                  what, spec.mb, spec.nb, rows, cols, block_rows, block_cols, count, max_block_cyclic_blocks));
}

LocalArray matrix_array(const MatrixSpec& spec, std::int64_t rows, std::int64_t cols, int rank) {
  const int gi = rank / spec.cols, gj = rank % spec.cols;
  if (spec.dist != Dist::block_cyclic) {
    const Block r = split(rows, spec.rows, gi), c = split(cols, spec.cols, gj);
    LocalArray a = single_box(box2(r.offset, r.size, c.offset, c.size));
    a.ndim = 2;
    return a;
  }
  // ScaLAPACK's NUMROC: the rows (columns) of the blocks dealt to this grid row (column), in block order.
  LocalArray a;
  a.ndim = 2;
  // Block counts first, so that no block offset past the matrix is formed (extreme block extents would overflow).
  const std::int64_t block_rows = rows < 1 ? 0 : (rows - 1) / spec.mb + 1;
  const std::int64_t block_cols = cols < 1 ? 0 : (cols - 1) / spec.nb + 1;
  std::int64_t locr = 0, locc = 0;
  for (std::int64_t bi = gi; bi < block_rows; bi += spec.rows) locr += std::min(spec.mb, rows - bi * spec.mb);
  for (std::int64_t bj = gj; bj < block_cols; bj += spec.cols) locc += std::min(spec.nb, cols - bj * spec.nb);
  a.shape = {locr, locc, 1};
  for (std::int64_t bi = gi, li = 0; bi < block_rows; bi += spec.rows, li += spec.mb)
    for (std::int64_t bj = gj, lj = 0; bj < block_cols; bj += spec.cols, lj += spec.nb)
      a.parts.push_back({box2(bi * spec.mb, std::min(spec.mb, rows - bi * spec.mb), bj * spec.nb,
                              std::min(spec.nb, cols - bj * spec.nb)),
                         {li, lj, 0}});
  return a;
}

LocalArray transposed(const LocalArray& array) {
  LocalArray t = array;
  std::swap(t.shape[0], t.shape[1]);
  for (Placement& p : t.parts) {
    std::swap(p.global.lo[0], p.global.lo[1]);
    std::swap(p.global.n[0], p.global.n[1]);
    std::swap(p.local_lo[0], p.local_lo[1]);
  }
  return t;
}

const char* algo_name(Algo algo) {
  switch (algo) {
    case Algo::local:
      return "local GEMM";
    case Algo::allgather:
      return "all-gather + GEMM";
    case Algo::reduce_scatter:
      return "GEMM + reduce-scatter";
    case Algo::summa:
      return "SUMMA";
  }
  return "?";
}

NativeArrays native_arrays(const Problem& p, Algo algo, int gr, int gc) {
  const int n = p.ranks;
  MatrixSpec a, b, d;
  switch (algo) {
    case Algo::local:
      break;
    case Algo::allgather:
      a = {Dist::row_blocks, n, 1, 0, 0};
      b = {Dist::column_blocks, 1, n, 0, 0};
      d = b;
      break;
    case Algo::reduce_scatter:
      a = {Dist::column_blocks, 1, n, 0, 0};
      b = {Dist::row_blocks, n, 1, 0, 0};
      d = {Dist::row_blocks, n, 1, 0, 0};
      break;
    case Algo::summa:
      a = b = d = {Dist::grid, gr, gc, 0, 0};
      break;
  }
  return {arrays_of(a, p.m, p.k, n, p.ta), arrays_of(b, p.k, p.n, n, p.tb), arrays_of(d, p.m, p.n, n, false)};
}

NativeArrays user_arrays(const Problem& p) {
  NativeArrays u;
  for (int r = 0; r < p.ranks; ++r) {
    u.a.push_back(matrix_array(p.a, p.ta ? p.k : p.m, p.ta ? p.m : p.k, r));
    u.b.push_back(matrix_array(p.b, p.tb ? p.n : p.k, p.tb ? p.k : p.n, r));
    u.d.push_back(matrix_array(p.d, p.m, p.n, r));
  }
  return u;
}

std::string infeasible(const Problem& p, Algo algo, int gr, int gc) {
  auto need = [](const char* extent, std::int64_t value, int parts, const char* why) {
    return value >= parts ? std::string()
                          : fmt::format("{} = {} is less than the {} {} it is cut into", extent, value, parts, why);
  };
  std::string why;
  switch (algo) {
    case Algo::local:
      return p.ranks == 1 ? std::string() : fmt::format("a local product needs one rank, not {}", p.ranks);
    case Algo::allgather:
      why = need("m", p.m, p.ranks, "ranks (row blocks of A)");
      if (why.empty()) why = need("n", p.n, p.ranks, "ranks (column blocks of B and D)");
      return why;
    case Algo::reduce_scatter:
      why = need("k", p.k, p.ranks, "ranks (column blocks of A, row blocks of B)");
      if (why.empty()) why = need("m", p.m, p.ranks, "ranks (row blocks of D)");
      return why;
    case Algo::summa:
      why = need("m", p.m, gr, "grid rows");
      if (why.empty()) why = need("n", p.n, gc, "grid columns");
      if (why.empty()) why = need("k", p.k, std::max(gr, gc), "grid rows or columns");
      return why;
  }
  return "unknown algorithm";
}

AlgoPlan choose(const Problem& p) {
  const NativeArrays user = user_arrays(p);
  const double ranks = p.ranks;
  const double share = (ranks - 1) / ranks;
  auto plan_for = [&](Algo algo) {
    AlgoPlan plan;
    plan.algo = algo;
    if (algo == Algo::summa) {
      const auto g = summa_grid(p);
      plan.grid_rows = g[0];
      plan.grid_cols = g[1];
    } else {
      plan.grid_rows = p.ranks;
    }
    const NativeArrays native = native_arrays(p, algo, plan.grid_rows, plan.grid_cols);
    plan.move_a = !same_layouts(user.a, native.a);
    plan.move_b = !same_layouts(user.b, native.b);
    plan.move_d = !same_layouts(user.d, native.d);
    const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
    double moved = 0;
    if (plan.move_a) moved += m * k / ranks * share;
    if (plan.move_b) moved += k * n / ranks * share;
    if (plan.move_d) moved += m * n / ranks * share;
    switch (algo) {
      case Algo::local:
        break;
      case Algo::allgather:
        moved += m * k * share;
        break;
      case Algo::reduce_scatter:
        moved += m * n * share;
        break;
      case Algo::summa: {
        const double gr = plan.grid_rows, gc = plan.grid_cols;
        moved += m / gr * k * (gc - 1) / gc + k * n / gc * (gr - 1) / gr;
        break;
      }
    }
    plan.moved_elements = moved;
    return plan;
  };
  if (p.ranks == 1) return plan_for(Algo::local);  // whatever was asked: there is nothing to distribute
  if (p.requested) {
    const Algo algo = *p.requested;
    AlgoPlan plan = plan_for(algo);
    const std::string why = infeasible(p, algo, plan.grid_rows, plan.grid_cols);
    if (!why.empty())
      throw InvalidArgument(
          fmt::format("algorithm: {} cannot run this product on {} ranks: {}", algo_name(algo), p.ranks, why));
    return plan;
  }
  std::optional<AlgoPlan> best;
  std::string reasons;
  for (Algo algo : {Algo::allgather, Algo::reduce_scatter, Algo::summa}) {
    AlgoPlan plan = plan_for(algo);
    const std::string why = infeasible(p, algo, plan.grid_rows, plan.grid_cols);
    if (!why.empty()) {
      reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", algo_name(algo), why);
      continue;
    }
    if (!best || plan.moved_elements < best->moved_elements) best = plan;
  }
  if (!best)
    throw InvalidArgument(fmt::format("shape: no algorithm can run a {}x{}x{} product on {} ranks ({})", p.m, p.n, p.k,
                                      p.ranks, reasons));
  return *best;
}

std::vector<Panel> summa_panels(std::int64_t k, int rows, int cols, int min_panels) {
  std::vector<std::int64_t> cuts{k};
  for (int j = 0; j < cols; ++j) cuts.push_back(split(k, cols, j).offset);
  for (int i = 0; i < rows; ++i) cuts.push_back(split(k, rows, i).offset);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const int base = static_cast<int>(cuts.size()) - 1;
  const int per = std::max(1, (min_panels + base - 1) / std::max(base, 1));
  std::vector<Panel> out;
  for (int b = 0; b < base; ++b) {
    const std::int64_t s = cuts[static_cast<std::size_t>(b)], e = cuts[static_cast<std::size_t>(b) + 1];
    if (e == s) continue;
    const int parts = static_cast<int>(std::min<std::int64_t>(per, e - s));
    for (int q = 0; q < parts; ++q) {
      const Block blk = split(e - s, parts, q);
      out.push_back({s + blk.offset, blk.size, block_of(k, cols, s), block_of(k, rows, s)});
    }
  }
  return out;
}

}  // namespace cuplan::detail::dist
