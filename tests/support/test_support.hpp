// SPDX-License-Identifier: Apache-2.0
#pragma once
// Helpers shared by the tests: GPU gating, random data, poisoning, relative error, expected exceptions.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cuplan/device.hpp"

/// Skips the current test with the reason when no CUDA device is usable (never passes silently).
#if CUPLAN_HAS_CUDA
#define CUPLAN_NO_GPU_REASON "no CUDA device: this test needs a GPU (the CUDA runtime found none)"
#else
#define CUPLAN_NO_GPU_REASON \
  "no CUDA device: this test needs a GPU, and this is the CPU-only build (CUPLAN_ENABLE_CUDA=OFF)"
#endif
#define CUPLAN_REQUIRE_GPU()                                               \
  do {                                                                     \
    if (!::cuplan::cuda_available()) GTEST_SKIP() << CUPLAN_NO_GPU_REASON; \
  } while (0)

namespace cuplan::testing {

/// True under CUPLAN_TEST_SHORT=1, which scripts/sanitize_gpu.sh sets: compute-sanitizer slows every launch and API
/// call by orders of magnitude, so the long loops (soak, threads, stress) run fewer iterations, and the work-area
/// tests' 512 MiB operands are 32 MiB ones (the sanitizers also shadow every byte a kernel touches). Every check
/// still runs; only repetition counts and those sizes change.
inline bool short_run() {
  const char* value = std::getenv("CUPLAN_TEST_SHORT");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

/// Joins `thread` within `limit`; otherwise fails the test with `what` and ends the process, since a hung thread can
/// be neither joined nor destroyed. A hang then fails the test at once instead of running into the suite's timeout.
inline void join_or_exit(std::thread& thread, std::chrono::seconds limit, const char* what) {
  std::packaged_task<void()> join([&] { thread.join(); });
  auto joined = join.get_future();
  std::thread joiner(std::move(join));
  if (joined.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << what << " did not end in " << limit.count() << " s";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  joiner.join();
}

inline std::mt19937_64& rng() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

template <class T>
std::vector<T> random_vector(std::size_t n) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
      x = T(static_cast<typename T::value_type>(u(rng())), static_cast<typename T::value_type>(u(rng())));
    } else {
      x = static_cast<T>(u(rng()));
    }
  }
  return v;
}

/// ||a - b|| / ||b|| over any two ranges of (complex or real) values convertible to std::complex<double>.
template <class A, class B>
double relative_error(const A& a, const B& b) {
  double num = 0, den = 0;
  auto ia = std::begin(a);
  for (auto ib = std::begin(b); ib != std::end(b); ++ia, ++ib) {
    std::complex<double> x(*ia), y(*ib);
    num += std::norm(x - y);
    den += std::norm(y);
  }
  if (den == 0) return std::sqrt(num);
  return std::sqrt(num / den);
}

/// The message of the `E` that `call` throws; otherwise a text saying it threw another type or nothing, which a
/// search for the expected words then fails on.
template <class E, class F>
std::string message_of(F&& call) {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

/// Fails the test unless `call` throws an `E` whose message contains every one of `parts`. Nothing thrown is a fatal
/// failure (wrap the call in ASSERT_NO_FATAL_FAILURE where the test must stop there); another exception type
/// propagates, as it would from the test body.
template <class E, class F>
void expect_throw_naming(F&& call, std::initializer_list<std::string> parts) {
  try {
    call();
  } catch (const E& e) {
    const std::string message = e.what();
    for (const std::string& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "missing \"" << part << "\" in: " << message;
    return;
  }
  FAIL() << "no exception: expected one naming " << *parts.begin();
}

}  // namespace cuplan::testing
