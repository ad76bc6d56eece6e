// FFTW planning effort and persisted wisdom: a MEASURE plan is correct, tuning::save writes FFTW's wisdom, and a
// second process after tuning::load holds the same wisdom and plans the same problem from it without measuring
// again (its wisdom does not grow). File errors name the path.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fft/fft_test_util.hpp"
#include "fft/fftw/fftw_backend.hpp"
#include "support/second_process.hpp"

namespace cuplan {
namespace {

using namespace cuplan::testing;

const std::vector<std::int64_t> shape{6, 360};

// MEASURE-planned C2C of fresh random data into a poisoned result, against the float64 reference.
void check_measured_transform(Planning planning) {
  auto host = HostArray<std::complex<double>>::random(shape);
  Tensor out = Tensor::empty({6, 360}, c128);
  for (std::int64_t i = 0; i < 6 * 360; ++i) out.data<std::complex<double>>()[i] = {std::nan(""), std::nan("")};
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cpu(), .planning = planning});
  f.plan();
  f.execute({.out = out.view()});
  const auto expected = reference_dft(host.dense(), shape, {1}, -1);
  EXPECT_LT(relative_error(to_dense(out.view()), expected), tolerance(c128, 360)) << f.describe();
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "_" + std::to_string(getpid()))).string();
}

TEST(FftTuning, MeasureAndPatientPlansAreCorrect) {
  check_measured_transform(Planning::measure);
  check_measured_transform(Planning::patient);
}

TEST(FftTuning, PlanningOutOfRangeIsInvalidArgument) {
  std::vector<std::complex<double>> x(16);
  try {
    FFT f(TensorView(x.data(), {16}), {.execution = Execution::cpu(), .planning = static_cast<Planning>(7)});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("planning"), std::string::npos) << e.what();
  }
}

TEST(FftTuning, SecondProcessLoadsTheWisdomAndDoesNotMeasureAgain) {
  check_measured_transform(Planning::measure);  // this process learns wisdom for the problem
  const std::string wisdom = detail::export_fftw_wisdom().double_precision;
  ASSERT_FALSE(wisdom.empty());
  const std::string path = temp_path("cuplan_fftw_tuning");
  tuning::save(path);
  const int status = run_second_process(
      "FftTuning.DISABLED_SecondProcess",
      {{"CUPLAN_TEST_TUNING_FILE", path}, {"CUPLAN_TEST_WISDOM_BYTES", std::to_string(wisdom.size())}});
  if (std::getenv("CUPLAN_TEST_KEEP_TUNING_FILE") == nullptr) std::remove(path.c_str());
  EXPECT_EQ(status, 0) << "the second process failed (its output is above)";
}

// Run only by SecondProcessLoadsTheWisdomAndDoesNotMeasureAgain, in a fresh process.
TEST(FftTuning, DISABLED_SecondProcess) {
  const char* path = std::getenv("CUPLAN_TEST_TUNING_FILE");
  ASSERT_NE(path, nullptr) << "run by FftTuning.SecondProcessLoadsTheWisdomAndDoesNotMeasureAgain";
  EXPECT_TRUE(detail::export_fftw_wisdom().double_precision.size() <
              std::stoul(std::getenv("CUPLAN_TEST_WISDOM_BYTES")))
      << "a fresh process should not hold the saved wisdom yet";
  tuning::load(path);
  const std::string loaded = detail::export_fftw_wisdom().double_precision;
  // FFTW's wisdom string round-trips: what the first process saved is what this one now exports.
  std::ifstream file(path);
  const std::string saved((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(saved.find(loaded), std::string::npos) << "exported wisdom differs from the saved wisdom";
  const auto start = std::chrono::steady_clock::now();
  check_measured_transform(Planning::measure);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(detail::export_fftw_wisdom().double_precision, loaded)
      << "MEASURE planned from scratch although the wisdom held the problem";
  std::printf("MEASURE plan and transform after tuning::load: %.3f ms\n", seconds * 1e3);
}

TEST(FftTuning, FileErrorsNameThePath) {
  const std::string missing = temp_path("cuplan_no_such_tuning");
  try {
    tuning::load(missing);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string bad = temp_path("cuplan_bad_tuning");
  { std::ofstream(bad) << "not a tuning file\n"; }
  EXPECT_THROW(tuning::load(bad), InvalidArgument);
  std::remove(bad.c_str());
  EXPECT_THROW(tuning::save("/nonexistent-dir/x/tuning.txt"), InvalidArgument);
}

}  // namespace
}  // namespace cuplan
