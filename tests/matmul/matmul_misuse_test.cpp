// SPDX-License-Identifier: Apache-2.0
// Misuse of the Matmul API, table-driven (CPU execution): output aliasing, enum and option ranges, validation on
// plan-cache hits, every member after free(). Plus D written over C's own memory, which must work.

#include <gtest/gtest.h>

#include <vector>

#include "matmul/matmul_reference.hpp"
#include "support/misuse_table.hpp"

namespace cuplan::testing {
namespace {

const Execution kCpu = Execution::cpu();

struct Buffers {
  std::vector<float> a = random_vector<float>(64), b = random_vector<float>(64), c = random_vector<float>(64),
                     bias = random_vector<float>(64);
};
std::vector<MisuseRow> rows() {
  Buffers& m = table_buffers<Buffers>();
  const TensorView a(m.a.data(), {4, 4}), b(m.b.data(), {4, 4}), c(m.c.data(), {4, 4});
  std::vector<MisuseRow> t;
  // Output aliasing: D over any input but C's exact elements.
  const auto execute_into = [=](TensorView out, MatmulOptions options = {}) {
    return [=] {
      MatmulOptions o = options;
      o.execution = kCpu;
      Matmul mm(a, b, o);
      mm.plan();
      mm.execute({.out = out});
    };
  };
  t.push_back({"out_is_a", execute_into(a), Expect::invalid_argument, {"Matmul.execute", "out overlaps a"}});
  t.push_back({"out_is_b", execute_into(b), Expect::invalid_argument, {"out overlaps b"}});
  t.push_back({"out_overlaps_bias",
               execute_into(TensorView(m.bias.data(), {4, 4}),
                            {.epilog = Epilog::bias, .bias = TensorRef(TensorView(m.bias.data() + 2, {4}))}),
               Expect::invalid_argument,
               {"out overlaps bias"}});
  t.push_back({"out_shifted_over_c",
               execute_into(TensorView(m.c.data() + 1, {4, 4}), {.c = TensorRef(c), .beta = 1.0}),
               Expect::invalid_argument,
               {"out overlaps c", "very same elements"}});
  t.push_back({"out_rows_overlap",
               execute_into(TensorView(m.c.data(), f32, {4, 4}, Strides{1, 1})),
               Expect::invalid_argument,
               {"out overlaps itself"}});
  // Enum and option ranges.
  t.push_back({"epilog_99",
               [=] { Matmul(a, b, {.epilog = bad<Epilog>(99), .execution = kCpu}); },
               Expect::invalid_argument,
               {"epilog", "Epilog", "got 99"}});
  t.push_back({"epilog_99_function",
               [=] { matmul(a, b, {.epilog = bad<Epilog>(99), .execution = kCpu}); },
               Expect::invalid_argument,
               {"matmul", "epilog", "got 99"}});
  t.push_back({"plan_epilog_77",
               [=] {
                 Matmul mm(a, b, {.execution = kCpu});
                 mm.plan({.epilog = bad<Epilog>(77)});
               },
               Expect::invalid_argument,
               {"epilog", "got 77"}});
  t.push_back({"compute_42",
               [=] { matmul(a, b, {.compute = bad<Compute>(42), .execution = kCpu}); },
               Expect::invalid_argument,
               {"compute", "Compute", "got 42"}});
  // A new epilog's bias given to plan() obeys the construction's rules: device memory with host operands is refused
  // naming it (it used to be taken and fail at execute, or, on a GPU, reach the CPU route's copy).
  t.push_back({"plan_bias_in_device_memory",
               [=] {
                 Matmul mm(a, b, {.execution = kCpu});
                 mm.plan({.epilog = Epilog::bias,
                          .bias = TensorRef(
                              TensorView(m.bias.data(), f32, {4}, Strides{1}, Device::cuda(0), MemorySpace::device))});
               },
               Expect::invalid_argument,
               {"Matmul", "bias", "host memory", "cuda:0"}});
  // A result dtype outside DTypeCode is named as such, the same on both forms (it was "result_dtype ? for f32
  // operands", a NotSupported for fp8 operands).
  t.push_back({"result_dtype_99",
               [=] { Matmul(a, b, {.execution = kCpu, .result_dtype = DType(bad<DTypeCode>(99))}); },
               Expect::invalid_argument,
               {"Matmul", "result_dtype", "DTypeCode", "got 99"}});
  t.push_back({"result_dtype_99_function",
               [=] { matmul(a, b, {.execution = kCpu, .result_dtype = DType(bad<DTypeCode>(99))}); },
               Expect::invalid_argument,
               {"matmul", "result_dtype", "DTypeCode", "got 99"}});
  t.push_back({"blocking_7",
               [=] { matmul(a, b, {.execution = kCpu, .blocking = bad<Blocking>(7)}); },
               Expect::invalid_argument,
               {"blocking", "got 7"}});
  t.push_back({"negative_threads",
               [=] { Matmul(a, b, {.execution = Execution::cpu(-3)}); },
               Expect::invalid_argument,
               {"threads", "got -3"}});
  // Plan preferences and autotune options: checked on the CPU too, where there is no heuristic and nothing to time.
  t.push_back({"preferences_limit_0",
               [=] {
                 Matmul mm(a, b, {.execution = kCpu});
                 mm.plan({.preferences = {.limit = 0}});
               },
               Expect::invalid_argument,
               {"Matmul", "preferences.limit", "at least 1", "got 0"}});
  t.push_back({"preferences_reduction_scheme_mask_0x10",
               [=] {
                 Matmul mm(a, b, {.execution = kCpu});
                 mm.plan({.preferences = {.reduction_scheme_mask = 0x10}});
               },
               Expect::invalid_argument,
               {"reduction_scheme_mask", "0x7", "got 0x10"}});
  t.push_back({"preferences_max_waves_count_negative",
               [=] {
                 Matmul mm(a, b, {.execution = kCpu});
                 mm.plan({.preferences = {.max_waves_count = -2}});
               },
               Expect::invalid_argument,
               {"max_waves_count", "got -2"}});
  t.push_back({"autotune_iterations_0",
               [=] {
                 Matmul mm(a, b, {.execution = kCpu});
                 mm.plan();
                 mm.autotune({.iterations = 0});
               },
               Expect::invalid_argument,
               {"Matmul", "iterations", "at least 1", "got 0"}});
  // The same validation on a plan-cache hit as on a miss.
  t.push_back({"beta_without_c_on_cache_hit",
               [=] {
                 (void)matmul(a, b, {.execution = kCpu});  // makes the plan (no c)
                 (void)matmul(a, b, {.beta = 1.0, .execution = kCpu});
               },
               Expect::invalid_argument,
               {"matmul", "beta", "needs operand c"}});
  t.push_back({"beta_without_c_on_cache_miss",
               [=] { (void)matmul(a, b, {.beta = 1.0, .execution = kCpu}); },
               Expect::invalid_argument,
               {"matmul", "beta", "needs operand c"}});
  t.push_back({"complex_alpha_on_cache_hit",
               [=] {
                 (void)matmul(a, b, {.execution = kCpu});
                 (void)matmul(a, b, {.alpha = {1.0, 2.0}, .execution = kCpu});
               },
               Expect::invalid_argument,
               {"alpha", "real"}});
  // Every public member after free().
  const std::vector<std::pair<const char*, std::function<void(Matmul&)>>> members = {
      {"plan", [](Matmul& x) { x.plan(); }},
      {"algorithms", [](Matmul& x) { (void)x.algorithms(); }},
      {"autotune", [](Matmul& x) { x.autotune(); }},
      {"execute", [](Matmul& x) { (void)x.execute(); }},
      {"reset_operands", [=](Matmul& x) { x.reset_operands({.a = TensorRef(a)}); }},
      {"reset_operand", [=](Matmul& x) { x.reset_operand(MatmulOperand::a, TensorRef(a)); }},
      // Arguments that are wrong as well: the state is checked first (an out-of-range `which` was InvalidArgument).
      {"reset_operand", [=](Matmul& x) { x.reset_operand(static_cast<MatmulOperand>(9), TensorRef(a)); }},
      {"plan", [](Matmul& x) { x.plan({.preferences = {.limit = 0}}); }},
      {"autotune", [](Matmul& x) { x.autotune({.iterations = 0}); }},
      {"execute", [=](Matmul& x) { (void)x.execute({.out = TensorView(a).as_read_only()}); }},
      {"release_operand", [](Matmul& x) { x.release_operand(); }},
      {"aux", [](Matmul& x) { (void)x.aux(); }},
      {"bias_gradient", [](Matmul& x) { (void)x.bias_gradient(); }},
  };
  for (const auto& [name, member] : members) {
    t.push_back({std::string("after_free_") + name + "_" + std::to_string(t.size()),
                 [=, member = member] {
                   Matmul x(a, b, {.execution = kCpu});
                   x.plan();
                   x.free();
                   member(x);
                 },
                 Expect::state_error,
                 {"Matmul", name}});
  }
  return t;
}

CUPLAN_MISUSE_SUITE(MatmulMisuse, rows());

// D = A B + C written over C's own memory (same layout as D): C is read before D overwrites it.
TEST(MatmulAliasing, OutputOverCWorks) {
  const std::int64_t m = 5, n = 7, k = 3;
  const std::vector<float> av = random_vector<float>(m * k), bv = random_vector<float>(k * n);
  const TensorView a(av.data(), {m, k}), b(bv.data(), {k, n});
  // D's layout for this product, then C in exactly that layout.
  Matmul probe(a, b, {.execution = kCpu});
  probe.plan();
  const Tensor d_layout = probe.execute();
  std::vector<float> cbuf(static_cast<std::size_t>(m * n));
  const std::vector<float> c_values = random_vector<float>(cbuf.size());
  const TensorView c(cbuf.data(), f32, {m, n}, d_layout.strides());
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t col = 0; col < n; ++col)
      cbuf[static_cast<std::size_t>(r * c.strides()[0] + col * c.strides()[1])] =
          c_values[static_cast<std::size_t>(r * n + col)];
  Matmul mm(a, b, {.c = TensorRef(c), .beta = 1.0, .execution = kCpu});
  mm.plan();
  const Tensor d = mm.execute({.out = c});
  EXPECT_EQ(d.data(), static_cast<void*>(cbuf.data()));
  std::vector<cd> expected(static_cast<std::size_t>(m * n));
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t col = 0; col < n; ++col) {
      cd sum = c_values[static_cast<std::size_t>(r * n + col)];
      for (std::int64_t i = 0; i < k; ++i)
        sum += double(av[static_cast<std::size_t>(r * k + i)]) * double(bv[static_cast<std::size_t>(i * n + col)]);
      expected[static_cast<std::size_t>(r * n + col)] = sum;
    }
  EXPECT_LT(relative_error(read_all(d), expected), 1e-5);
}

}  // namespace
}  // namespace cuplan::testing
