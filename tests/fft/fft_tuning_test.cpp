// SPDX-License-Identifier: Apache-2.0
// FFTW planning effort and persisted tuning (CPU): MEASURE / PATIENT plans are correct; a second process that
// loads the saved wisdom plans the same problems from it without measuring (both precisions); out-of-range
// Planning values and bad tuning files are InvalidArgument naming what was wrong; saved Matmul entries round-trip
// and an entry for another context is ignored with a log line; save / load are safe while other threads plan.

#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fft/fft_test_util.hpp"
#include "fft/fftw/fftw_backend.hpp"
#include "plan/cache/tuning_store.hpp"
#include "support/second_process.hpp"

namespace cuplan {
namespace {

using namespace cuplan::testing;

const std::vector<std::int64_t> kShape{6, 360};

// A C2C over the last axis of fresh random data into a poisoned result, against the float64 reference.
template <class T>
void check_transform(Planning planning) {
  auto host = HostArray<std::complex<T>>::random(kShape);
  const DType dtype = sizeof(T) == 8 ? c128 : c64;
  Tensor out = Tensor::empty({6, 360}, dtype);
  for (std::int64_t i = 0; i < 6 * 360; ++i) out.data<std::complex<T>>()[i] = {std::nan(""), std::nan("")};
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cpu(), .planning = planning});
  f.plan();
  f.execute({.out = out.view()});
  const auto expected = reference_dft(host.dense(), kShape, {1}, -1);
  EXPECT_LT(relative_error(to_dense(out.view()), expected), tolerance(dtype, 360)) << f.describe();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))).string();
}

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(FftTuning, MeasureAndPatientPlansAreCorrect) {
  check_transform<double>(Planning::measure);
  check_transform<double>(Planning::patient);
  check_transform<float>(Planning::measure);
}

TEST(FftTuning, PlanningOutOfRangeIsTheSameInvalidArgumentOnEveryPath) {
  std::vector<std::complex<double>> x(16);
  const TensorView view(x.data(), {16});
  const auto message = [](const auto& call) {
    try {
      call();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no InvalidArgument");
  };
  const std::string class_form =
      message([&] { FFT f(view, {.execution = Execution::cpu(), .planning = static_cast<Planning>(7)}); });
  EXPECT_EQ(class_form, "FFT: planning: expected a Planning value from 0 to 2 (one of its enumerators), got 7");
  const std::string miss = message([&] { fft(view, {.execution = Execution::cpu(), .planning = Planning{7}}); });
  fft(view, {.execution = Execution::cpu(), .planning = Planning::patient});  // a cached plan for the shapes
  const std::string hit = message([&] { fft(view, {.execution = Execution::cpu(), .planning = Planning{7}}); });
  EXPECT_EQ(miss, "fft: planning: expected a Planning value from 0 to 2 (one of its enumerators), got 7");
  EXPECT_EQ(hit, miss);
  EXPECT_EQ(message([&] { fft(view, {.execution = Execution::cpu(), .planning = Planning{-1}}); }),
            "fft: planning: expected a Planning value from 0 to 2 (one of its enumerators), got -1");
}

// The first process measures both precisions, saves, and runs DISABLED_SecondProcess in a fresh process.
TEST(FftTuning, SecondProcessLoadsTheWisdomAndDoesNotMeasureAgain) {
  check_transform<double>(Planning::measure);
  check_transform<float>(Planning::measure);
  EXPECT_GE(detail::fftw_plan_counts().measured, 2) << "this process measures the problems (or did so before)";
  const detail::FftwWisdom wisdom = detail::export_fftw_wisdom();
  ASSERT_FALSE(wisdom.double_precision.empty());
  ASSERT_FALSE(wisdom.single_precision.empty());
  const std::string path = temp_path("cuplan_fftw_tuning");
  tuning::save(path);
  const int status = run_second_process("FftTuning.DISABLED_SecondProcess", {{"CUPLAN_TEST_TUNING_FILE", path}});
  std::remove(path.c_str());
  EXPECT_EQ(status, 0) << "the second process failed (its output is above)";
}

// Run only by SecondProcessLoadsTheWisdomAndDoesNotMeasureAgain, in a fresh process.
TEST(FftTuning, DISABLED_SecondProcess) {
  const char* path = std::getenv("CUPLAN_TEST_TUNING_FILE");
  ASSERT_NE(path, nullptr) << "run by FftTuning.SecondProcessLoadsTheWisdomAndDoesNotMeasureAgain";
  // Touching FFTW's wisdom before anything planned used to create FFTW's planner without its threaded solvers;
  // the wisdom header hashes the solver set, so the load below then failed.
  const detail::FftwWisdom fresh = detail::export_fftw_wisdom();
  tuning::load(path);
  const detail::FftwWisdom loaded = detail::export_fftw_wisdom();
  EXPECT_NE(loaded.double_precision, fresh.double_precision);
  EXPECT_NE(loaded.single_precision, fresh.single_precision);
  check_transform<double>(Planning::measure);
  check_transform<float>(Planning::measure);
  const detail::FftwPlanCounts counts = detail::fftw_plan_counts();
  EXPECT_EQ(counts.measured, 0) << "FFTW measured although the loaded wisdom held the problems";
  EXPECT_GE(counts.from_wisdom, 2);
  EXPECT_EQ(detail::export_fftw_wisdom().double_precision, loaded.double_precision);
}

// The same through strings: the first process measures, keeps save_to_string()'s text in a file of its own, and a
// fresh process reads that file itself and plans from load_from_string() without measuring.
TEST(FftTuning, StringsCarryTheWisdomToASecondProcess) {
  check_transform<double>(Planning::measure);
  check_transform<float>(Planning::measure);
  const std::string text = tuning::save_to_string();
  ASSERT_TRUE(text.starts_with("cuplan-tuning 1\n")) << text.substr(0, 40);
  const std::string path = temp_path("cuplan_fftw_tuning_string");
  write_text(path, text);
  const int status =
      run_second_process("FftTuning.DISABLED_SecondProcessFromString", {{"CUPLAN_TEST_TUNING_FILE", path}});
  std::remove(path.c_str());
  EXPECT_EQ(status, 0) << "the second process failed (its output is above)";
}

// Run only by StringsCarryTheWisdomToASecondProcess, in a fresh process.
TEST(FftTuning, DISABLED_SecondProcessFromString) {
  const char* path = std::getenv("CUPLAN_TEST_TUNING_FILE");
  ASSERT_NE(path, nullptr) << "run by FftTuning.StringsCarryTheWisdomToASecondProcess";
  tuning::load_from_string(read_text(path));
  check_transform<double>(Planning::measure);
  check_transform<float>(Planning::measure);
  const detail::FftwPlanCounts counts = detail::fftw_plan_counts();
  EXPECT_EQ(counts.measured, 0) << "FFTW measured although the loaded wisdom held the problems";
  EXPECT_GE(counts.from_wisdom, 2);
}

// Measuring can take seconds: its start is logged, and the planned line says how long it took.
TEST(FftTuning, MeasuringLogsItsStartAndHowLongItTook) {
  std::vector<std::string> lines;
  std::mutex mutex;
  set_log_level(LogLevel::info);
  set_logger([&](LogLevel, std::string_view message) {
    const std::lock_guard lock(mutex);
    lines.emplace_back(message);
  });
  // A shape no other test plans, so that the wisdom of this process cannot hold it.
  auto host = HostArray<std::complex<double>>::random({3, 486});
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cpu(1), .planning = Planning::measure});
  f.plan();
  (void)f.execute();  // FFTW plans at the first execute, on the operands' alignment
  set_logger(nullptr);
  const auto has = [&](const std::string& a, const std::string& b) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.find(a) != std::string::npos && l.find(b) != std::string::npos;
    });
  };
  EXPECT_TRUE(has("FFTW measure planning of c128 C2C rank 1", "started")) << fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_TRUE(has("measure measured in ", " ms)")) << fmt::format("{}", fmt::join(lines, "\n"));
}

TEST(FftTuning, SaveToStringIsWhatSaveWrites) {
  check_transform<float>(Planning::measure);
  const std::string path = temp_path("cuplan_fftw_tuning_same");
  tuning::save(path);
  const std::string text = tuning::save_to_string();
  EXPECT_EQ(read_text(path), text);
  std::remove(path.c_str());
  tuning::load_from_string(text);  // its own tuning again: accepted, and the text does not change
  EXPECT_EQ(tuning::save_to_string(), text);
}

TEST(FftTuning, BadStringsAreInvalidArgumentSayingWhatIsWrong) {
  const std::string before = tuning::save_to_string();
  for (const auto& [text, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"", "not a cuplan tuning file"},
           {"something else\n",
            "not a cuplan tuning file: expected the first line 'cuplan-tuning 1', got 'something else'"},
           {"cuplan-tuning 1\nentry\tonly-one-field\n", "line 2: malformed entry"}}) {
    try {
      tuning::load_from_string(text);
      ADD_FAILURE() << "expected InvalidArgument for '" << text << "'";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.starts_with("tuning::load_from_string: ")) << what;
      EXPECT_NE(what.find(fragment), std::string::npos) << "'" << fragment << "' in " << what;
    }
  }
  EXPECT_EQ(tuning::save_to_string(), before) << "a refused string changed the process's tuning";
}

void expect_load_error(const std::string& path, const std::vector<std::string>& fragments) {
  try {
    tuning::load(path);
    ADD_FAILURE() << "expected InvalidArgument for '" << path << "'";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tuning::load: '" + path + "'"), std::string::npos) << what;
    for (const std::string& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "'" << f << "' in " << what;
  }
}

TEST(FftTuning, BadFilesAreInvalidArgumentNamingThePathAndTheProblem) {
  const std::string dir = temp_path("cuplan_tuning_files");
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/tuning.txt";
  expect_load_error(file, {"cannot open", "No such file"});
  expect_load_error(dir, {"is a directory"});
  write_text(file, "not a tuning file\n");
  expect_load_error(file, {"not a cuplan tuning file", "cuplan-tuning 1", "got 'not a tuning file'"});
  write_text(file, "cuplan-tuning 1\nentry\tmatmul\tonly three fields\n");
  expect_load_error(file, {"line 2", "malformed entry"});
  write_text(file, "cuplan-tuning 1\nfftw-double 99999999999\n(fftw\n");
  expect_load_error(file, {"line 2", "announces 99999999999 bytes but only 6 remain"});
  write_text(file, "cuplan-tuning 1\nfftw-double -4\n");
  expect_load_error(file, {"line 2", "expected a byte count, got '-4'"});
  write_text(file, "cuplan-tuning 1\nwisdom 12\n");
  expect_load_error(file, {"line 2", "got 'wisdom 12'"});
  write_text(file, "cuplan-tuning 1\nfftw-double 10\n(garbage))\n");
  expect_load_error(file, {"FFTW rejected the saved double precision wisdom"});
  // A refused file adds nothing, not even its well-formed entries.
  write_text(file, "cuplan-tuning 1\nentry\tmatmul\trefused-problem\tctx\tchoice\nfftw-single 3\n(x(\n");
  expect_load_error(file, {"FFTW rejected the saved single precision wisdom"});
  EXPECT_FALSE(detail::tuning_lookup("matmul", "refused-problem", "ctx", "test").has_value());

  try {
    tuning::save(dir + "/no/such/dir/tuning.txt");
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("tuning::save: '" + dir + "/no/such/dir/tuning.txt': cannot write"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(FftTuning, SavedEntriesRoundTripAndAnotherContextIsIgnoredWithALogLine) {
  const std::string path = temp_path("cuplan_tuning_entries");
  write_text(path, "cuplan-tuning 1\nentry\tmatmul\t64x64x64 f32\tGPU A sm_90 cuBLASLt 1\t6 18 8 1 0\n");
  tuning::load(path);
  EXPECT_EQ(detail::tuning_lookup("matmul", "64x64x64 f32", "GPU A sm_90 cuBLASLt 1", "test").value_or("none"),
            "6 18 8 1 0");
  std::vector<std::string> lines;
  std::mutex lines_mutex;
  set_log_level(LogLevel::info);
  set_logger([&](LogLevel, std::string_view message) {
    std::lock_guard lock(lines_mutex);
    lines.emplace_back(message);
  });
  EXPECT_FALSE(detail::tuning_lookup("matmul", "64x64x64 f32", "GPU B sm_80 cuBLASLt 1", "Matmul").has_value());
  set_logger({});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "Matmul: saved tuning for this problem ignored: it was made for GPU A sm_90 cuBLASLt 1, this is GPU B "
            "sm_80 cuBLASLt 1");
  // Saved again, entries of other contexts included.
  tuning::save(path);
  EXPECT_NE(read_text(path).find("entry\tmatmul\t64x64x64 f32\tGPU A sm_90 cuBLASLt 1\t6 18 8 1 0\n"),
            std::string::npos);
  std::remove(path.c_str());
}

// FFTW's planner is not thread-safe: save and load take the planner lock that planning takes.
TEST(FftTuning, SaveAndLoadWhileOtherThreadsPlan) {
  const std::string path = temp_path("cuplan_tuning_threads");
  tuning::save(path);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> planners;
  for (int t = 0; t < 2; ++t)
    planners.emplace_back([&, t] {
      for (std::int64_t n = 16 + t; !stop.load(); n += 2) {
        std::vector<std::complex<float>> x(static_cast<std::size_t>(n), {1.0F, 0.0F});
        Tensor y = fft(TensorView(x.data(), {n}), {.execution = Execution::cpu(1), .planning = Planning::measure});
        if (std::abs(y.data<std::complex<float>>()[0].real() - static_cast<float>(n)) > 1e-3F * static_cast<float>(n))
          ++failures;
        if (n > 120) n = 16 + t;
      }
    });
  for (int i = 0; i < 20; ++i) {
    tuning::save(path);
    tuning::load(path);
  }
  stop = true;
  for (std::thread& t : planners) t.join();
  std::remove(path.c_str());
  EXPECT_EQ(failures.load(), 0);
}

// The temporary file of a save is written beside the target under a short name of its own: a target whose name is
// as long as the file system allows saves (it failed with "File name too long", the temporary's name being longer),
// and a directory that cannot be written gives a message naming the temporary.
TEST(FftTuning, SaveToALongFileNameAndAMessageThatNamesTheTemporary) {
  const std::string dir = temp_path("cuplan_tuning_long");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + std::string(250, 'w');
  tuning::save(path);
  EXPECT_EQ(read_text(path).rfind("cuplan-tuning", 0), 0U);
  tuning::load(path);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1U) << "no temporary file is left behind";

  const std::string missing = dir + "/no_such_directory/tuning.txt";
  try {
    tuning::save(missing);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tuning::save: '" + missing + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("temporary file '" + dir + "/no_such_directory/.cuplan-tuning."), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cuplan
