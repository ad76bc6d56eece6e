// SPDX-License-Identifier: Apache-2.0
// Host-operand Matmul split along the batch, M and N under a small device_memory_limit (docs/staging.md,
// "Matmul"): batches that do not divide by the chunk, a broadcast B, N split, C with beta, bias with gelu. Every
// result equals a float64 reference and the in-memory path (the same product on device copies), on fresh random
// data, with the output poisoned first; peak device memory (cuplan::memory::stats) stays within the limit. The
// stream tests make the caller's stream (or an `after` event's stream) write A late; a failed allocation in the
// middle of a call leaves the object usable.

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "base/fault_injection.hpp"
#include "matmul/matmul_reference.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {
namespace {

constexpr std::size_t workspace_cap = 4096;  // MatmulOptions::memory_limit: keeps the reserve small in the tests

struct Case {
  Shape batch{}, a_batch{}, b_batch{};  // broadcast batch shape and each operand's own
  std::int64_t m = 0, k = 0, n = 0;
  std::optional<Shape> c_batch{};  // C of shape c_batch + (M, N) when set
  double alpha = 1.0, beta = 0.0;
  Epilog epilog = Epilog::none;
  bool bias_per_entry = false;
  std::size_t limit = 0;
};

double apply(Epilog e, double x) {
  if (e == Epilog::relu || e == Epilog::relu_bias) return x > 0 ? x : 0;
  if (e == Epilog::gelu || e == Epilog::gelu_bias) return ref_gelu(x);
  return x;
}

double relative(const std::vector<cd>& got, const std::vector<cd>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    num += std::norm(got[i] - want[i]);
    den += std::norm(want[i]);
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

Tensor poisoned(const Shape& shape, const Strides& strides, DType dtype) {
  Tensor t = Tensor::empty_strided(shape, strides, dtype, Device::cpu());
  std::memset(t.data(), 0xff, static_cast<std::size_t>(t.numel()) * dtype.size());  // NaN patterns
  return t;
}

// Runs the case on host operands under its limit and checks it against the reference and the in-memory path.
template <class T>
void check_case(const Case& cs, double tolerance) {
  HostMatrix<T> a(cs.a_batch, cs.m, cs.k), b(cs.b_batch, cs.k, cs.n);
  std::optional<HostMatrix<T>> c;
  if (cs.c_batch) c.emplace(*cs.c_batch, cs.m, cs.n);
  std::int64_t batch = 1;
  for (auto e : cs.batch) batch *= e;
  const bool has_bias = cs.epilog == Epilog::bias || cs.epilog == Epilog::relu_bias || cs.epilog == Epilog::gelu_bias;
  std::vector<T> bias_values(static_cast<std::size_t>((cs.bias_per_entry ? batch : 1) * cs.m));
  for (auto& v : bias_values) v = from_cd<T>(cd(std::uniform_real_distribution<double>(-1, 1)(rng())));
  Shape bias_shape = cs.bias_per_entry ? cs.batch : Shape{};
  bias_shape.push_back(cs.m);
  const TensorView bias_view(bias_values.data(), dtype_of<T>, bias_shape, row_major_strides(bias_shape), Device::cpu(),
                             MemorySpace::host_pageable);

  MatmulOptions options{.alpha = cs.alpha, .beta = cs.beta, .epilog = cs.epilog, .execution = Execution::cuda()};
  if (c) options.c = TensorRef(c->view());
  if (has_bias) options.bias = TensorRef(bias_view);
  options.memory_limit = workspace_cap;
  options.device_memory_limit = cs.limit;
  Matmul mm(a.view(), b.view(), options);
  mm.plan();
  Tensor out = poisoned(mm.result_shape(), mm.result_strides(), mm.result_dtype());
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  memory::reset_peak(Device::cuda(0));
  const std::size_t before = memory::stats(Device::cuda(0)).bytes_in_use;
  Tensor staged = mm.execute({.out = out.view()});
  EXPECT_LE(memory::stats(Device::cuda(0)).peak_bytes - before, cs.limit) << "peak device memory above the limit";

  // The in-memory path: the same product on device copies of every operand.
  MatmulOptions device_options = options;
  device_options.device_memory_limit = 0;
  const Tensor da = Tensor::wrap(a.view()).to(Device::cuda(0)), db = Tensor::wrap(b.view()).to(Device::cuda(0));
  Tensor dc, dbias;
  if (c) device_options.c = TensorRef(dc = Tensor::wrap(c->view()).to(Device::cuda(0)));
  if (has_bias) device_options.bias = TensorRef(dbias = Tensor::wrap(bias_view).to(Device::cuda(0)));
  const Tensor in_memory = matmul(da, db, device_options).to(Device::cpu());

  std::vector<cd> want(static_cast<std::size_t>(batch * cs.m * cs.n));
  for (std::int64_t e = 0; e < batch; ++e)
    for (std::int64_t i = 0; i < cs.m; ++i)
      for (std::int64_t j = 0; j < cs.n; ++j) {
        cd x = 0;
        for (std::int64_t p = 0; p < cs.k; ++p) x += a.at(cs.batch, e, i, p) * b.at(cs.batch, e, p, j);
        x *= cs.alpha;
        if (c) x += cs.beta * c->at(cs.batch, e, i, j);
        if (has_bias) x += to_cd(bias_values[static_cast<std::size_t>((cs.bias_per_entry ? e * cs.m : 0) + i)]);
        want[static_cast<std::size_t>((e * cs.m + i) * cs.n + j)] = apply(cs.epilog, x.real());
      }
  const std::vector<cd> got = read_all(staged), memory_path = read_all(in_memory);
  EXPECT_TRUE(all_finite(got)) << "an element of D was not written";
  // cuBLASLt's gelu is its own tanh approximation: it agrees with the float64 formula to about 1e-10 in f64. The
  // staged result must still match the in-memory path (the same epilog) to the full tolerance.
  const bool gelu = cs.epilog == Epilog::gelu || cs.epilog == Epilog::gelu_bias;
  EXPECT_LT(relative(got, want), gelu ? std::max(tolerance, 1e-9) : tolerance) << mm.describe();
  EXPECT_LT(relative(got, memory_path), tolerance) << "differs from the in-memory path";
}

// Bytes of `rows` rows of A and D plus B and the fixed reserve: limits that force several tiles.
std::size_t limit_with(std::size_t resident, std::size_t slot_bytes) {
  return workspace_cap + 256 * 17 + resident + 3 * slot_bytes;
}

TEST(MatmulStagingSplit, BatchThatDoesNotDivideByTheChunk) {
  CUPLAN_REQUIRE_GPU();
  // 7 entries of (12 x 16) @ (16 x 10) f64, both batched: about two entries per tile.
  const std::size_t entry = (12 * 16 + 16 * 10 + 12 * 10) * 8;
  check_case<double>({.batch = {7},
                      .a_batch = {7},
                      .b_batch = {7},
                      .m = 12,
                      .k = 16,
                      .n = 10,
                      .limit = limit_with(0, 2 * entry + 512)},
                     1e-12);
  // Two batch axes (3 x 5) nested densely.
  check_case<float>({.batch = {3, 5},
                     .a_batch = {3, 5},
                     .b_batch = {3, 5},
                     .m = 9,
                     .k = 8,
                     .n = 7,
                     .limit = limit_with(0, 4 * (9 * 8 + 8 * 7 + 9 * 7) * 4 + 512)},
                    1e-5);
}

TEST(MatmulStagingSplit, BroadcastBAndRowsWithinAnEntry) {
  CUPLAN_REQUIRE_GPU();
  // B (24 x 20) shared by 5 entries of A (37 x 24): B stays, one entry per tile.
  check_case<double>({.batch = {5},
                      .a_batch = {5},
                      .b_batch = {},
                      .m = 37,
                      .k = 24,
                      .n = 20,
                      .limit = limit_with(24 * 20 * 8, 37 * 44 * 8 + 256)},
                     1e-12);
  // One entry does not fit a slot: M is split within each entry (each entry's own B uploaded once).
  check_case<double>({.batch = {3},
                      .a_batch = {3},
                      .b_batch = {3},
                      .m = 45,
                      .k = 16,
                      .n = 12,
                      .limit = limit_with(16 * 12 * 8, 7 * 28 * 8)},
                     1e-12);
  // A shared by every entry of B.
  check_case<float>({.batch = {4},
                     .a_batch = {},
                     .b_batch = {4},
                     .m = 21,
                     .k = 10,
                     .n = 13,
                     .limit = limit_with(10 * 13 * 4, 8 * 23 * 4)},
                    1e-5);
}

TEST(MatmulStagingSplit, BAboveTheLimitSplitsN) {
  CUPLAN_REQUIRE_GPU();
  // B is 256 x 300 f32 (300 KiB) under a 100 KB limit: N is split; M (40 or 300) too where needed.
  check_case<float>({.m = 40, .k = 256, .n = 300, .limit = 100000}, 1e-5);
  check_case<float>({.m = 300, .k = 256, .n = 40 * 8, .limit = 100000}, 1e-5);
  // Batched and broadcast B with N split.
  check_case<double>({.batch = {3}, .a_batch = {3}, .b_batch = {3}, .m = 33, .k = 64, .n = 97, .limit = 40000}, 1e-12);
  check_case<double>({.batch = {3}, .a_batch = {3}, .b_batch = {}, .m = 33, .k = 64, .n = 97, .limit = 40000}, 1e-12);
}

TEST(MatmulStagingSplit, CWithBetaIsSplitLikeD) {
  CUPLAN_REQUIRE_GPU();
  // 7 entries, two per tile (the last one alone): C travels with A and B in each tile's slot.
  check_case<double>({.batch = {7},
                      .a_batch = {7},
                      .b_batch = {7},
                      .m = 19,
                      .k = 8,
                      .n = 11,
                      .c_batch = Shape{7},
                      .alpha = 0.75,
                      .beta = 0.5,
                      .limit = limit_with(0, 2 * (19 * 8 + 8 * 11 + 2 * 19 * 11) * 8 + 256)},
                     1e-12);
  // B shared by 3 entries and split into blocks of its columns that stay while A's rows stream.
  check_case<double>({.batch = {3},
                      .a_batch = {3},
                      .b_batch = {},
                      .m = 33,
                      .k = 64,
                      .n = 97,
                      .c_batch = Shape{3},
                      .beta = 2.0,
                      .limit = 40000},
                     1e-12);
  // C broadcast over the batch, with rows and N split.
  check_case<double>({.batch = {2},
                      .a_batch = {2},
                      .b_batch = {},
                      .m = 41,
                      .k = 64,
                      .n = 90,
                      .c_batch = Shape{},
                      .beta = -1.0,
                      .limit = 30000},
                     1e-12);
  check_case<float>(
      {.m = 70, .k = 32, .n = 50, .c_batch = Shape{}, .beta = 1.0, .limit = limit_with(32 * 50 * 4, 2000)}, 1e-5);
}

TEST(MatmulStagingSplit, BiasWithGeluIsSplitAlongM) {
  CUPLAN_REQUIRE_GPU();
  // bias per row of D (length M); D column-major (the epilog's layout).
  check_case<float>({.m = 77, .k = 24, .n = 30, .epilog = Epilog::gelu_bias, .limit = limit_with(24 * 30 * 4, 1500)},
                    1e-5);
  // One bias per batch entry, 7 entries two per tile; N split with B's columns staying (bias with A's rows);
  // N split with A's rows staying (bias in the resident block), with C.
  check_case<double>({.batch = {7},
                      .a_batch = {7},
                      .b_batch = {7},
                      .m = 16,
                      .k = 8,
                      .n = 9,
                      .epilog = Epilog::gelu_bias,
                      .bias_per_entry = true,
                      .limit = limit_with(0, 2 * (16 * 8 + 8 * 9 + 16 * 9 + 16) * 8 + 256)},
                     1e-12);
  check_case<double>({.batch = {3},
                      .a_batch = {3},
                      .b_batch = {},
                      .m = 33,
                      .k = 64,
                      .n = 97,
                      .epilog = Epilog::gelu_bias,
                      .limit = 40000},
                     1e-12);
  check_case<double>({.batch = {2},
                      .a_batch = {2},
                      .b_batch = {2},
                      .m = 29,
                      .k = 64,
                      .n = 80,
                      .c_batch = Shape{2},
                      .beta = 0.5,
                      .epilog = Epilog::relu_bias,
                      .bias_per_entry = true,
                      .limit = 30000},
                     1e-12);
}

TEST(MatmulStagingSplit, UnsplittableEpilogAboveTheLimitIsNotSupportedNamingTheMinimum) {
  CUPLAN_REQUIRE_GPU();
  HostMatrix<float> a({}, 64, 64), b({}, 64, 64);
  Matmul mm(a.view(), b.view(),
            {.epilog = Epilog::bgrada,
             .execution = Execution::cuda(),
             .memory_limit = workspace_cap,
             .device_memory_limit = 20000});
  mm.plan();
  ASSERT_NO_FATAL_FAILURE(
      expect_throw_naming<NotSupported>([&] { (void)mm.execute(); }, {"minimum limit", "bias gradient"}));
  // Unsplit within a limit that holds it: the result of the in-memory path.
  Matmul fits(a.view(), b.view(),
              {.epilog = Epilog::bgrada, .execution = Execution::cuda(), .device_memory_limit = std::size_t{1} << 30});
  fits.plan();
  EXPECT_NO_THROW((void)fits.execute());
}

// A in pinned host memory, written by `writer` after a long spin; the staged call on `s` (after `after`) must read
// it only afterwards. Returns the relative error against the reference of the written values.
double late_operand(Stream& writer, Stream& s, bool use_event) {
  const std::int64_t m = 64, k = 32, n = 48;
  HostMatrix<float> source({}, m, k), b({}, k, n);
  Tensor device_a = Tensor::wrap(source.view()).to(Device::cuda(0));
  Tensor a = Tensor::empty({m, k}, f32, Device::cpu(), {}, HostMemory::pinned);
  std::memset(a.data(), 0, static_cast<std::size_t>(m * k) * 4);
  Matmul mm(a, b.view(),
            {.execution = Execution::cuda(),
             .memory_limit = workspace_cap,
             .device_memory_limit = limit_with(k * n * 4, 2000)});
  mm.plan({.stream = s});
  spin_kernel<<<1, 1, 0, writer.native()>>>(cycles_for_ms(100));
  CUPLAN_TEST_CUDA(cudaMemcpyAsync(a.data(), device_a.data(), static_cast<std::size_t>(m * k) * 4,
                                   cudaMemcpyDeviceToHost, writer.native()));
  Tensor d = use_event ? mm.execute({.stream = s, .after = {writer.record()}}) : mm.execute({.stream = s});
  std::vector<cd> want(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p)
        want[static_cast<std::size_t>(i * n + j)] += source.at({}, 0, i, p) * b.at({}, 0, p, j);
  return relative(read_all(d), want);
}

TEST(MatmulStagingSplit, BusyCallerStreamIsHonoured) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  EXPECT_LT(late_operand(s, s, false), 1e-5);
}

TEST(MatmulStagingSplit, AfterEventsAreHonoured) {
  CUPLAN_REQUIRE_GPU();
  Stream producer, consumer;
  EXPECT_LT(late_operand(producer, consumer, true), 1e-5);
}

TEST(MatmulStagingSplit, AFailedAllocationMidCallLeavesTheObjectUsable) {
  CUPLAN_REQUIRE_GPU();
  // Several tiles of two shapes (N split, shorter last blocks): slots, the resident block and the inner products'
  // workspaces are allocated during the call. Each device allocation of the call fails once in turn.
  const std::int64_t m = 50, k = 64, n = 90;
  HostMatrix<double> a({}, m, k), b({}, k, n);
  Matmul mm(a.view(), b.view(),
            {.execution = Execution::cuda(), .memory_limit = workspace_cap, .device_memory_limit = 30000});
  mm.plan();
  std::vector<cd> want(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p)
        want[static_cast<std::size_t>(i * n + j)] += a.at({}, 0, i, p) * b.at({}, 0, p, j);
  int failures = 0;
  for (std::int64_t nth = 1; nth < 64; ++nth) {
    detail::fault::arm(detail::fault::Site::device, nth);
    try {
      // release_workspace: every call allocates its buffers again, so each allocation point is reached.
      (void)mm.execute({.release_workspace = true});
    } catch (const OutOfMemory&) {
      ++failures;
    }
    const bool fired = detail::fault::fired();
    detail::fault::disarm();
    CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
    Tensor out = poisoned(mm.result_shape(), mm.result_strides(), mm.result_dtype());
    (void)mm.execute({.out = out.view()});
    EXPECT_LT(relative(read_all(out), want), 1e-12) << "after a failure at allocation " << nth;
    if (!fired) break;
  }
  EXPECT_GE(failures, 1);
}

}  // namespace
}  // namespace cuplan::testing
