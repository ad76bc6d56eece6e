// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what every rank of a distributed operation resolves alone before anything collective, from any
// extents and options (resolve_transform for DistributedFFT, resolve_product for DistributedMatmul, as boxes(),
// blocks() and the constructors call them), under AddressSanitizer and UBSan. Bad input must end in a cuplan::Error;
// what resolves must be a decomposition: every rank's boxes inside the global array, together holding each element
// once (checked with the exchange layer's tiling check), and the same on every rank.

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "cuplan/distributed.hpp"
#include "cuplan/distributed_matmul.hpp"
#include "distributed/distributed_fft_impl.hpp"
#include "distributed/distributed_matmul_impl.hpp"
#include "distributed/exchange/box_plan.hpp"
#include "fuzz_common.hpp"

namespace {

using namespace cuplan;
namespace dist = cuplan::detail::dist;

// Mostly small extents, sometimes ones at the edges of the range.
std::int64_t pick_extent(FuzzedDataProvider& in) {
  static constexpr std::int64_t edges[] = {0,
                                           -1,
                                           std::int64_t{1} << 31,
                                           std::int64_t{1} << 40,
                                           std::numeric_limits<std::int64_t>::max(),
                                           std::numeric_limits<std::int64_t>::min()};
  if (in.ConsumeIntegralInRange<int>(0, 7) == 0) return edges[in.ConsumeIntegralInRange<std::size_t>(0, 5)];
  return in.ConsumeIntegralInRange<std::int64_t>(1, 40);
}

int pick_grid_extent(FuzzedDataProvider& in) {
  static constexpr int edges[] = {0, -1, 65536, std::numeric_limits<int>::max(), std::numeric_limits<int>::min()};
  if (in.ConsumeIntegralInRange<int>(0, 5) == 0) return edges[in.ConsumeIntegralInRange<std::size_t>(0, 4)];
  return in.ConsumeIntegralInRange<int>(1, 8);
}

template <class E>
E pick_enum(FuzzedDataProvider& in, int last) {
  return static_cast<E>(in.ConsumeIntegralInRange<int>(0, last + 2));  // two values past the end on purpose
}

// The boxes of every rank tile `shape` (2 or 3 axes), or the process stops.
void check_tiling(const std::vector<dist::Box>& boxes, const std::array<std::int64_t, 3>& shape, int ndim) {
  std::vector<dist::LocalArray> arrays;
  for (const dist::Box& b : boxes) arrays.push_back(dist::single_box(b));
  if (!dist::tiling_problem(arrays, shape, ndim, "fuzz").empty()) __builtin_trap();
}

void fuzz_fft(FuzzedDataProvider& in) {
  const int ranks = in.ConsumeIntegralInRange<int>(0, 8);
  const int ndim = in.ConsumeIntegralInRange<int>(1, 4);
  Shape shape = Dims::filled(ndim, 1);
  for (int d = 0; d < ndim; ++d) shape[d] = pick_extent(in);
  static const DType dtypes[] = {f32, f64, c64, c128, f16, i32};
  const DType dtype = dtypes[in.ConsumeIntegralInRange<std::size_t>(0, 5)];
  DistributedFFTOptions o;
  o.decomposition = pick_enum<Decomposition>(in, 2);
  if (in.ConsumeBool()) o.process_grid = std::array<int, 2>{pick_grid_extent(in), pick_grid_extent(in)};
  if (in.ConsumeBool()) o.fft_type = pick_enum<FFTType>(in, 2);
  o.result_layout = pick_enum<ResultLayout>(in, 1);
  o.input_layout = pick_enum<InputLayout>(in, 1);
  o.normalization = pick_enum<Normalization>(in, 3);
  o.exchange = pick_enum<ExchangeMethod>(in, 2);
  std::vector<detail::Resolved> all;
  try {
    for (int r = 0; r < ranks; ++r) all.push_back(detail::resolve_transform(r, ranks, shape, dtype, o));
  } catch (const cuplan::Error&) {
    return;
  }
  if (all.empty()) return;
  // Every rank resolves the same layout and type; input boxes tile the input array, output boxes the output array.
  for (const auto& r : all)
    if (r.type != all[0].type || r.layout.stages() != all[0].layout.stages()) __builtin_trap();
  std::vector<dist::Box> in_boxes, out_boxes;
  for (const auto& r : all) {
    in_boxes.push_back(r.in_box);
    out_boxes.push_back(r.out_box);
  }
  const auto& first = all[0];
  check_tiling(in_boxes, first.type == FFTType::r2c ? first.real_shape : first.complex_shape, ndim);
  check_tiling(out_boxes, first.type == FFTType::c2r ? first.real_shape : first.complex_shape, ndim);
}

MatrixLayout pick_layout(FuzzedDataProvider& in) {
  MatrixLayout l;
  l.distribution = pick_enum<MatrixDistribution>(in, 3);
  if (in.ConsumeBool()) l.process_grid = {pick_grid_extent(in), pick_grid_extent(in)};
  if (in.ConsumeBool()) l.block = {pick_extent(in), pick_extent(in)};
  return l;
}

void fuzz_matmul(FuzzedDataProvider& in) {
  const int ranks = in.ConsumeIntegralInRange<int>(1, 8);
  const std::int64_t m = pick_extent(in), n = pick_extent(in), k = pick_extent(in);
  DistributedMatmulOptions o;
  o.transpose_a = in.ConsumeBool();
  o.transpose_b = in.ConsumeBool();
  o.layout_a = pick_layout(in);
  o.layout_b = pick_layout(in);
  o.layout_d = pick_layout(in);
  o.algorithm = pick_enum<DistributedMatmulAlgorithm>(in, 4);
  o.exchange = pick_enum<ExchangeMethod>(in, 2);
  o.epilog = pick_enum<Epilog>(in, 15);
  o.compute = pick_enum<Compute>(in, 4);
  o.min_panels = in.ConsumeIntegralInRange<int>(-2, 64);
  detail::MatmulResolved r;
  try {
    r = detail::resolve_product(in.ConsumeIntegralInRange<int>(0, ranks - 1), ranks, m, n, k, o);
  } catch (const cuplan::Error&) {
    return;
  }
  // The user's arrays of stored A, B and D tile those matrices; so do the algorithm's own.
  const std::array<std::int64_t, 3> a{o.transpose_a ? k : m, o.transpose_a ? m : k, 1};
  const std::array<std::int64_t, 3> b{o.transpose_b ? n : k, o.transpose_b ? k : n, 1};
  const std::array<std::int64_t, 3> d{m, n, 1};
  for (const auto* arrays : {&r.user, &r.native}) {
    if (!dist::tiling_problem(arrays->a, a, 2, "a").empty()) __builtin_trap();
    if (!dist::tiling_problem(arrays->b, b, 2, "b").empty()) __builtin_trap();
    if (!dist::tiling_problem(arrays->d, d, 2, "d").empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider in(bytes, size);
  if (in.ConsumeBool())
    fuzz_fft(in);
  else
    fuzz_matmul(in);
  return 0;
}
