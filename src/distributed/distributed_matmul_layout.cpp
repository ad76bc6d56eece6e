// SPDX-License-Identifier: Apache-2.0
// The pure part of one rank's distributed product, before any operand exists: the options checked by number and
// range, the problem, the algorithm's plan and every rank's local arrays (also DistributedMatmul::blocks), as the
// matrix layout arithmetic of matmul_layout.hpp gives them.
#include <fmt/format.h>

#include <array>
#include <utility>

#include "cuplan/errors.hpp"
#include "distributed/distributed_matmul_impl.hpp"
#include "distributed/option_range.hpp"

namespace cuplan::detail {

namespace {

dist::Dist to_dist(MatrixDistribution d) {
  return static_cast<dist::Dist>(static_cast<int>(d));
}

std::optional<dist::Algo> to_algo(DistributedMatmulAlgorithm a) {
  switch (a) {
    case DistributedMatmulAlgorithm::automatic:
      return std::nullopt;
    case DistributedMatmulAlgorithm::local:
      return dist::Algo::local;
    case DistributedMatmulAlgorithm::allgather_gemm:
      return dist::Algo::allgather;
    case DistributedMatmulAlgorithm::gemm_reduce_scatter:
      return dist::Algo::reduce_scatter;
    case DistributedMatmulAlgorithm::summa:
      return dist::Algo::summa;
  }
  throw InvalidArgument(
      fmt::format("algorithm: expected automatic, local, allgather_gemm, gemm_reduce_scatter or "
                  "summa, got the value {}",
                  static_cast<int>(a)));
}

DistributedMatrix public_matrix(const dist::LocalArray& a) {
  DistributedMatrix m;
  m.local_shape = Shape{a.shape[0], a.shape[1]};
  for (const dist::Placement& p : a.parts)
    m.blocks.push_back(
        {{{p.global.lo[0], p.global.lo[1]}, {p.global.n[0], p.global.n[1]}}, {p.local_lo[0], p.local_lo[1]}});
  return m;
}

}  // namespace

DistributedMatmulAlgorithm to_public(dist::Algo a) {
  switch (a) {
    case dist::Algo::allgather:
      return DistributedMatmulAlgorithm::allgather_gemm;
    case dist::Algo::reduce_scatter:
      return DistributedMatmulAlgorithm::gemm_reduce_scatter;
    case dist::Algo::summa:
      return DistributedMatmulAlgorithm::summa;
    default:
      return DistributedMatmulAlgorithm::local;
  }
}

bool bias_epilog(Epilog e) {
  return e == Epilog::bias || e == Epilog::relu_bias || e == Epilog::gelu_bias;
}

MatmulResolved resolve_product(int rank, int size, std::int64_t m, std::int64_t n, std::int64_t k,
                               const DistributedMatmulOptions& o) {
  (void)rank;
  if (m < 1 || n < 1 || k < 1)
    throw InvalidArgument(fmt::format("m, n, k: expected positive extents, got {}x{}x{}", m, n, k));
  if (o.min_panels < 0)
    throw InvalidArgument(fmt::format("min_panels: expected 0 (chosen) or a positive count, got {}", o.min_panels));
  // Out-of-range values first, by number: the name of such a value would be "?".
  dist::check_enum(o.exchange, ExchangeMethod::nccl, "exchange", "ExchangeMethod");
  dist::check_enum(o.epilog, Epilog::bgradb, "epilog", "Epilog");
  dist::check_enum(o.compute, Compute::f64, "compute", "Compute");
  // Elements of up to 16 bytes (c128): no matrix whose byte count overflows an int64.
  for (const auto& [what, extents] :
       {std::pair{"m x k (A)", std::array{m, k}}, std::pair{"k x n (B)", std::array{k, n}},
        std::pair{"m x n (D)", std::array{m, n}}})
    dist::check_element_count(extents, 16, what);
  const Epilog e = o.epilog;
  if (e != Epilog::none && e != Epilog::relu && e != Epilog::gelu && !bias_epilog(e))
    throw NotSupported(
        fmt::format("epilog: a distributed product takes none, relu, gelu, bias, relu_bias or "
                    "gelu_bias, got {}",
                    to_string(e)));
  MatmulResolved r;
  dist::Problem& p = r.problem;
  p.m = m;
  p.n = n;
  p.k = k;
  p.ta = o.transpose_a;
  p.tb = o.transpose_b;
  p.ranks = size;
  p.a =
      dist::resolve_spec(to_dist(o.layout_a.distribution), o.layout_a.process_grid, o.layout_a.block, size, "layout_a");
  p.b =
      dist::resolve_spec(to_dist(o.layout_b.distribution), o.layout_b.process_grid, o.layout_b.block, size, "layout_b");
  p.d =
      dist::resolve_spec(to_dist(o.layout_d.distribution), o.layout_d.process_grid, o.layout_d.block, size, "layout_d");
  dist::check_block_count(p.a, p.ta ? k : m, p.ta ? m : k, "layout_a");
  dist::check_block_count(p.b, p.tb ? n : k, p.tb ? k : n, "layout_b");
  dist::check_block_count(p.d, m, n, "layout_d");
  p.requested = to_algo(o.algorithm);
  r.plan = dist::choose(p);
  r.user = dist::user_arrays(p);
  r.native = dist::native_arrays(p, r.plan.algo, r.plan.grid_rows, r.plan.grid_cols);
  return r;
}

DistributedMatmulBlocks blocks_of(const MatmulResolved& r, int rank) {
  const auto i = static_cast<std::size_t>(rank);
  DistributedMatmulBlocks b;
  b.a = public_matrix(r.user.a[i]);
  b.b = public_matrix(r.user.b[i]);
  b.d = public_matrix(r.user.d[i]);
  b.c = b.d;
  b.bias_length = r.user.d[i].shape[0];
  b.algorithm = to_public(r.plan.algo);
  b.process_grid = {r.plan.grid_rows, r.plan.grid_cols};
  return b;
}

}  // namespace cuplan::detail
