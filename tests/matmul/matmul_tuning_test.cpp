// SPDX-License-Identifier: Apache-2.0
// Persisted autotune (GPU): a process autotunes a product and saves its tuning; a second process (fork + exec)
// loads it, autotunes the same product without a single cuBLASLt run of the autotuner (detail::mm::autotune_runs
// counts every warm-up and timed run), picks the same algorithm, and computes the right result. Entries saved for
// another device are not used: that second process runs the autotuner again.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "matmul/cublaslt/cublaslt_backend.hpp"
#include "support/second_process.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

constexpr std::int64_t m = 192, n = 160, k = 224;

struct Product {
  std::vector<float> a = testing::random_vector<float>(m * k), b = testing::random_vector<float>(k * n);
  Tensor da = Tensor::wrap(TensorView(a.data(), {m, k})).to(Device::cuda(0));
  Tensor db = Tensor::wrap(TensorView(b.data(), {k, n})).to(Device::cuda(0));
  Matmul mm{da, db, {.compute = Compute::f32}};

  // D against a float64 reference, D poisoned first.
  void check_result() {
    Tensor out = Tensor::empty(mm.result_shape(), f32, Device::cuda(0));
    std::vector<float> nan(static_cast<std::size_t>(m * n), std::nanf(""));
    copy(TensorView(nan.data(), {m, n}), out.view());
    mm.execute({.out = out.view()});
    Tensor host = out.to(Device::cpu());
    double err = 0, norm = 0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double ref = 0;
        for (std::int64_t p = 0; p < k; ++p) ref += double(a[i * k + p]) * double(b[p * n + j]);
        const double got = host.data<float>()[i * host.view().strides()[0] + j * host.view().strides()[1]];
        err += (got - ref) * (got - ref);
        norm += ref * ref;
      }
    EXPECT_LT(std::sqrt(err / norm), 1e-5) << mm.describe();
  }
};

std::string config(const AlgorithmInfo& a) {
  return std::to_string(a.algorithm_id) + "/" + std::to_string(a.tile) + "/" + std::to_string(a.stages) + "/" +
         std::to_string(a.split_k) + "/" + std::to_string(a.reduction_scheme);
}

TEST(MatmulTuning, SecondProcessRunsNoTimingAndPicksTheSameAlgorithm) {
  CUPLAN_REQUIRE_GPU();
  Product p;
  p.mm.plan();
  const long before = detail::mm::autotune_runs();
  p.mm.autotune();
  ASSERT_GT(detail::mm::autotune_runs(), before) << "the first autotune should time candidates";
  if (p.mm.algorithms().size() < 2) GTEST_SKIP() << "the heuristic offers one candidate: nothing to choose";
  const std::string chosen = config(p.mm.algorithms().front());
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cuplan_matmul_tuning_" + std::to_string(getpid()))).string();
  tuning::save(path);
  const int status = testing::run_second_process("MatmulTuning.DISABLED_SecondProcess",
                                                 {{"CUPLAN_TEST_TUNING_FILE", path}, {"CUPLAN_TEST_CHOSEN", chosen}});
  std::remove(path.c_str());
  EXPECT_EQ(status, 0) << "the second process failed (its output is above)";
}

// Run only by SecondProcessRunsNoTimingAndPicksTheSameAlgorithm, in a fresh process.
TEST(MatmulTuning, DISABLED_SecondProcess) {
  CUPLAN_REQUIRE_GPU();
  const char* path = std::getenv("CUPLAN_TEST_TUNING_FILE");
  const char* chosen = std::getenv("CUPLAN_TEST_CHOSEN");
  ASSERT_TRUE(path != nullptr && chosen != nullptr) << "run by MatmulTuning.SecondProcessRunsNoTimingAndPicks...";
  ASSERT_EQ(detail::mm::autotune_runs(), 0);
  tuning::load(path);
  Product p;
  p.mm.plan();
  p.mm.autotune();
  EXPECT_EQ(detail::mm::autotune_runs(), 0) << "autotune ran candidates although the tuning was loaded";
  EXPECT_EQ(config(p.mm.algorithms().front()), chosen) << p.mm.describe();
  p.check_result();
}

TEST(MatmulTuning, AnEntryForAnotherDeviceIsNotUsed) {
  CUPLAN_REQUIRE_GPU();
  Product p;
  p.mm.plan();
  p.mm.autotune();  // records an entry for this device
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cuplan_matmul_stale_" + std::to_string(getpid()))).string();
  tuning::save(path);
  // The same entries, as if saved on another device: rewrite this device's context.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), edited;
  cudaDeviceProp props{};
  ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
  for (std::size_t at = text.find(props.name); at != std::string::npos; at = text.find(props.name))
    text.replace(at, std::string(props.name).size(), "Another GPU");
  { std::ofstream(path) << text; }
  const int status =
      testing::run_second_process("MatmulTuning.DISABLED_StaleSecondProcess", {{"CUPLAN_TEST_TUNING_FILE", path}});
  std::remove(path.c_str());
  EXPECT_EQ(status, 0);
}

TEST(MatmulTuning, DISABLED_StaleSecondProcess) {
  CUPLAN_REQUIRE_GPU();
  const char* path = std::getenv("CUPLAN_TEST_TUNING_FILE");
  ASSERT_NE(path, nullptr);
  tuning::load(path);
  Product p;
  p.mm.plan();
  std::vector<std::string> lines;
  set_log_level(LogLevel::info);
  set_logger([&](LogLevel, std::string_view message) { lines.emplace_back(message); });
  p.mm.autotune();
  set_logger({});
  EXPECT_GT(detail::mm::autotune_runs(), 0) << "an entry saved for another device was used";
  bool logged = false;
  for (const std::string& line : lines)
    logged = logged || (line.find("saved tuning for this problem ignored") != std::string::npos &&
                        line.find("Another GPU") != std::string::npos);
  EXPECT_TRUE(logged) << "no log line names the ignored entry's device";
  p.check_result();
}

}  // namespace
}  // namespace cuplan
