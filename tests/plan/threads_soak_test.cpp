// SPDX-License-Identifier: Apache-2.0
// Threads and soak, through the public API as users call it:
// - 16 threads run FFT and Matmul, class and function forms, on random shapes and dtypes, each checked against a
//   float64 reference (outputs poisoned first). On the CPU execution space (run under TSan by
//   scripts/sanitize_cpu.sh) and on the GPU (each thread on its own stream, device and host operands).
// - 100,000 plan/execute/free cycles on the GPU with the pool's bytes in use and reserved bytes flat.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "fft/fft_test_util.hpp"
#include "plan/plan_test_values.hpp"

namespace cuplan::testing {
namespace {

/// The logical values of `t` after the work on `stream` that produced it (a blocking copy on that stream).
std::vector<cd> read_back(const TensorView& t, StreamRef stream) {
  Tensor host = Tensor::empty(t.shape(), t.dtype(), Device::cpu());
  std::memset(host.data(), 0xff, static_cast<std::size_t>(host.numel()) * t.dtype().size());  // poison
  copy(t, host.view(), stream);
  return to_dense(host.view());
}

enum class Form { function, function_out, klass };

/// What one thread is doing now, for the report on a thread that does not finish (the test's watchdog).
class Progress {
 public:
  using clock = std::chrono::steady_clock;
  void call(std::string what) {
    const std::lock_guard lock(mutex_);
    call_ = std::move(what);
    step_locked("starts");
  }
  void step(const std::string& what) {
    const std::lock_guard lock(mutex_);
    step_locked(what);
  }
  void finish() {
    const std::lock_guard lock(mutex_);
    done_ = true;
  }
  bool done() const {
    const std::lock_guard lock(mutex_);
    return done_;
  }
  std::string describe() const {
    const std::lock_guard lock(mutex_);
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(clock::now() - since_).count();
    return done_ ? std::string("done") : fmt::format("{}: {} (for {} s)", call_, now_, seconds);
  }

 private:
  void step_locked(const std::string& what) {
    now_ = what;
    since_ = clock::now();
  }
  mutable std::mutex mutex_;
  std::string call_ = "not started", now_;
  clock::time_point since_ = clock::now();
  bool done_ = false;
};

/// One thread's worth of random calls. Returns a description of the first wrong result (empty when all agree).
struct Worker {
  Space space;
  unsigned seed;
  int calls;
  Progress* progress;

  std::string run() const {
    std::mt19937_64 gen(seed);
    std::optional<Stream> stream;
    if (space == Space::cuda) stream.emplace(Device::cuda(0));
    const Execution execution =
        space == Space::cpu ? Execution::cpu(1 + static_cast<int>(seed % 2)) : Execution::cuda();
    for (int call = 0; call < calls; ++call) {
      const bool is_fft = gen() % 2 == 0;
      const auto form = static_cast<Form>(gen() % 3);
      // On the GPU a quarter of the calls take host operands (the staging path), the rest device operands.
      const bool device_operands = space == Space::cuda && gen() % 4 != 0;
      const StreamRef s = stream ? stream->ref() : current_stream();
      progress->call(fmt::format("call {} of {} ({}, form {}, {} operands)", call, calls, is_fft ? "fft" : "matmul",
                                 static_cast<int>(form), device_operands ? "device" : "host"));
      std::string failure;
      try {
        failure = is_fft ? fft_call(gen, form, device_operands, execution, s)
                         : matmul_call(gen, form, device_operands, execution, s);
      } catch (const std::exception& e) {
        // Which call raised, in which form and on which operands: a sticky CUDA error names only where it surfaced.
        return fmt::format("call {} ({}, form {}, {} operands) raised: {}", call, is_fft ? "fft" : "matmul",
                           static_cast<int>(form), device_operands ? "device" : "host", e.what());
      }
      if (!failure.empty()) return fmt::format("call {} ({}): {}", call, is_fft ? "fft" : "matmul", failure);
    }
    return {};
  }

  static Tensor place(const Tensor& host, bool on_device, StreamRef s) {
    return on_device ? host.to(Device::cuda(0), s) : host;
  }

  std::string fft_call(std::mt19937_64& gen, Form form, bool on_device, const Execution& execution, StreamRef s) const {
    static constexpr std::int64_t lengths[] = {8, 12, 16, 30, 64, 100};
    const std::int64_t batch = 1 + static_cast<std::int64_t>(gen() % 6);
    // Under the sanitizer (short_run) one length: every new cuFFT kernel is instrumented when first loaded, under a
    // driver lock that every other thread then waits for.
    const std::int64_t n = short_run() ? 16 : lengths[gen() % std::size(lengths)];
    const DType dtype = gen() % 2 ? c64 : c128;
    const auto values = random_values(static_cast<std::size_t>(batch * n), true, gen);
    progress->step(fmt::format("[{}, {}] {}: operand", batch, n, dtype));
    const Tensor x = place(host_tensor(values, {batch, n}, dtype), on_device, s);
    // A prvalue per call, not a copy of one object (GCC 13's -Warray-bounds misreads copying the 1-element axes).
    const auto options = [&] { return FFTOptions{.axes = {1}, .execution = execution, .stream = s}; };
    std::vector<cd> got;
    progress->step(fmt::format("[{}, {}] {}: transform and read back", batch, n, dtype));
    if (form == Form::function) {
      got = read_back(fft(x, options()), s);
    } else if (form == Form::function_out) {
      Tensor out = Tensor::empty({batch, n}, dtype, on_device ? Device::cuda(0) : Device::cpu(), s);
      if (!on_device) std::memset(out.data(), 0xff, static_cast<std::size_t>(batch * n) * dtype.size());
      fft(x, out.view(), options());
      got = read_back(out.view(), s);
    } else {
      FFT plan(x, options());
      progress->step(fmt::format("[{}, {}] {}: FFT::plan", batch, n, dtype));
      plan.plan();
      progress->step(fmt::format("[{}, {}] {}: FFT::execute and read back", batch, n, dtype));
      got = read_back(plan.execute(), s);
      progress->step(fmt::format("[{}, {}] {}: FFT::free", batch, n, dtype));
      plan.free();
    }
    progress->step("checking");
    const double err = relative_error(got, reference_dft(values, {batch, n}, {1}, -1));
    if (!(err < tolerance(dtype, n))) return fmt::format("[{}, {}] {} error {}", batch, n, dtype, err);
    return {};
  }

  std::string matmul_call(std::mt19937_64& gen, Form form, bool on_device, const Execution& execution,
                          StreamRef s) const {
    // Under the sanitizer two sizes per dimension (few distinct cuBLASLt kernels; see fft_call).
    auto extent = [&] {
      return short_run() ? 8 * (1 + static_cast<std::int64_t>(gen() % 2)) : 1 + static_cast<std::int64_t>(gen() % 40);
    };
    const std::int64_t m = extent(), n = extent(), k = extent();
    const DType dtype = gen() % 2 ? f32 : f64;
    const auto a_values = random_values(static_cast<std::size_t>(m * k), false, gen);
    const auto b_values = random_values(static_cast<std::size_t>(k * n), false, gen);
    progress->step(fmt::format("{}x{}x{} {}: operands", m, n, k, dtype));
    const Tensor a = place(host_tensor(a_values, {m, k}, dtype), on_device, s);
    const Tensor b = place(host_tensor(b_values, {k, n}, dtype), on_device, s);
    MatmulOptions options{.execution = execution, .stream = s};
    std::vector<cd> got;
    progress->step(fmt::format("{}x{}x{} {}: product and read back", m, n, k, dtype));
    if (form == Form::function) {
      got = read_back(matmul(a, b, options), s);
    } else if (form == Form::function_out) {
      // D = A B + 1 * C over a zero C: the accumulate path, whose result is a new Tensor.
      Tensor c = host_tensor(std::vector<cd>(static_cast<std::size_t>(m * n)), {m, n}, dtype);
      c = place(c, on_device, s);
      options.c = c;
      options.beta = 1.0;
      got = read_back(matmul(a, b, options), s);
    } else {
      Matmul plan(a, b, options);
      progress->step(fmt::format("{}x{}x{} {}: Matmul::plan", m, n, k, dtype));
      plan.plan();
      progress->step(fmt::format("{}x{}x{} {}: Matmul::execute and read back", m, n, k, dtype));
      got = read_back(plan.execute(), s);
      progress->step(fmt::format("{}x{}x{} {}: Matmul::free", m, n, k, dtype));
      plan.free();
    }
    progress->step("checking");
    // Componentwise against |A||B|: random shapes include 1x1 products whose one entry nearly cancels.
    if (got.size() != static_cast<std::size_t>(m * n))
      return fmt::format("{}x{}x{} {} result size {}", m, n, k, dtype, got.size());
    const double err = product_error(got, a_values, b_values, m, n, k);
    const double tol = product_tolerance(k, dtype == f64 ? 0x1p-53 : 0x1p-24);
    if (!(err < tol)) return fmt::format("{}x{}x{} {} error {} (bound {})", m, n, k, dtype, err, tol);
    return {};
  }
};

class ThreadsAndSoak : public ::testing::TestWithParam<Space> {};

/// Seconds after which a thread that has not finished is a hang: CUPLAN_TEST_HANG_SECONDS, else 300 (3000 under
/// the sanitizer, which slows every call by orders of magnitude).
std::chrono::seconds hang_limit() {
  const char* env = std::getenv("CUPLAN_TEST_HANG_SECONDS");
  if (env != nullptr && std::atoi(env) > 0) return std::chrono::seconds(std::atoi(env));
  return std::chrono::seconds(short_run() ? 3000 : 300);
}

TEST_P(ThreadsAndSoak, SixteenThreadsOfRandomCallsAgreeWithTheReference) {
  CUPLAN_REQUIRE_SPACE(GetParam());
  constexpr int threads = 16;
  const int calls = GetParam() == Space::cuda ? (short_run() ? 6 : 60) : 25;
  const unsigned base_seed = std::random_device{}();
  std::vector<std::string> failures(threads);
  std::vector<Progress> progress(threads);
  if (GetParam() == Space::cuda && short_run()) {
    // Under compute-sanitizer every thread's programme first runs once on this thread, then the plan cache is
    // emptied, so that the libraries' kernels load one at a time. The tool instruments each module as it loads; with
    // many threads loading at once, its load callback (inside cuFFT's plan creation) waited on a driver lock that
    // was never released, and every thread stayed in its first call under each of the four tools (docs/dev/testing.md).
    // The threaded run below still plans, caches and executes concurrently; only the first loads are out of it.
    for (int t = 0; t < threads; ++t) {
      Progress sequential;
      const std::string failure = Worker{GetParam(), base_seed + static_cast<unsigned>(t), calls, &sequential}.run();
      ASSERT_EQ(failure, "") << "sequential pass, thread " << t << ", seed " << base_seed + t;
    }
    plan_cache::clear();
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const auto i = static_cast<std::size_t>(t);
      try {
        failures[i] = Worker{GetParam(), base_seed + static_cast<unsigned>(t), calls, &progress[i]}.run();
      } catch (const std::exception& e) {
        failures[i] = std::string("exception: ") + e.what();
      }
      progress[i].finish();
    });
  // Watchdog: every 30 s the threads still running say what they are doing (so a slow run under the sanitizer can
  // be told from a hung one); past the hang limit the test fails with that list and ends the process, since a hung
  // thread can be neither joined nor destroyed.
  const auto start = Progress::clock::now();
  auto next_report = start + std::chrono::seconds(30);
  const auto unfinished = [&] {
    std::string out;
    for (int t = 0; t < threads; ++t)
      if (!progress[static_cast<std::size_t>(t)].done())
        out += fmt::format("\n  thread {} (seed {}): {}", t, base_seed + static_cast<unsigned>(t),
                           progress[static_cast<std::size_t>(t)].describe());
    return out;
  };
  for (std::string running = unfinished(); !running.empty(); running = unfinished()) {
    const auto now = Progress::clock::now();
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
    if (now - start >= hang_limit()) {
      ADD_FAILURE() << "threads still running after " << elapsed << " s (a hang):" << running;
      std::fflush(nullptr);
      std::_Exit(1);
    }
    if (now >= next_report) {
      std::fprintf(stderr, "threads test, %lld s: still running:%s\n", static_cast<long long>(elapsed),
                   running.c_str());
      next_report += std::chrono::seconds(30);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t)
    EXPECT_EQ(failures[static_cast<std::size_t>(t)], "") << "thread " << t << ", seed " << base_seed + t;
}

INSTANTIATE_TEST_SUITE_P(Spaces, ThreadsAndSoak, ::testing::Values(Space::cpu, Space::cuda), space_name);

int soak_cycles() {
  const char* env = std::getenv("CUPLAN_SOAK_CYCLES");  // a chosen length, at least 100 (10 samples of 10)
  if (env != nullptr) return std::max(100, std::atoi(env));
  return short_run() ? 200 : 100000;
}

TEST(Soak, PlanExecuteFreeCyclesKeepDeviceMemoryFlat) {
  CUPLAN_REQUIRE_GPU();
  const Device gpu = Device::cuda(0);
  Stream s(gpu);
  const auto fft_values = random_values(4 * 64, true, rng());
  const auto a_values = random_values(24 * 16, false, rng()), b_values = random_values(16 * 20, false, rng());
  const Tensor x = host_tensor(fft_values, {4, 64}, c64).to(gpu, s);
  const Tensor a = host_tensor(a_values, {24, 16}, f32).to(gpu, s);
  const Tensor b = host_tensor(b_values, {16, 20}, f32).to(gpu, s);

  const int cycles = soak_cycles(), samples = 10;
  std::vector<memory::Stats> stats;
  Tensor last_fft, last_product;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    {
      FFT f(x, {.axes = {1}, .stream = s});
      f.plan();
      last_fft = f.execute();
      f.free();
    }
    {
      Matmul mm(a, b, {.stream = s});
      mm.plan();
      last_product = mm.execute();
      mm.free();
    }
    if ((cycle + 1) % (cycles / samples) == 0) {
      s.synchronize();
      stats.push_back(memory::stats(gpu));
    }
  }
  EXPECT_LT(relative_error(read_back(last_fft, s), reference_dft(fft_values, {4, 64}, {1}, -1)), tolerance(c64, 64));
  EXPECT_LT(relative_error(read_back(last_product, s), reference_product(a_values, b_values, 24, 20, 16)), 1e-5);
  // After the first sample (pool warm), neither the live bytes nor what the pool holds from the driver may grow.
  ASSERT_EQ(stats.size(), static_cast<std::size_t>(samples));
  for (std::size_t i = 1; i < stats.size(); ++i) {
    EXPECT_EQ(stats[i].bytes_in_use, stats[0].bytes_in_use) << "sample " << i;
    EXPECT_LE(stats[i].pool_reserved, stats[0].pool_reserved) << "sample " << i;
    EXPECT_EQ(stats[i].allocations - stats[i].deallocations, stats[0].allocations - stats[0].deallocations)
        << "sample " << i;
  }
  EXPECT_GE(stats.back().allocations, static_cast<std::size_t>(cycles)) << "the cycles must allocate (results)";
}

}  // namespace
}  // namespace cuplan::testing
