// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the samples: the exit code for "needs a GPU, none here", a result check that exits non-zero, the report of
// a cuplan error, the run of a sample's body with its closing line and error report, random test values, and one
// thread per rank for the distributed samples.

#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <cuplan/cuplan.hpp>

namespace sample {

/// Exit code CTest treats as "skipped".
inline constexpr int skip_code = 77;

/// Ends the program with skip_code and a clear line when there is no GPU.
inline void require_gpu(const char* name) {
  if (!cuplan::cuda_available()) {
    std::printf("%s: no CUDA device on this machine; this sample needs a GPU, skipped\n", name);
    std::exit(skip_code);
  }
}

/// Where the sample's tensors live: CUDA device 0 when there is a GPU, else the host, where the same calls run on
/// the CPU with host streams (work at the call, events complete at once). Says which on stdout.
inline cuplan::Device device(const char* name) {
  const bool gpu = cuplan::cuda_available();
  std::printf("%s: running on %s\n", name, gpu ? "CUDA device 0" : "the CPU (no CUDA device; host streams)");
  return gpu ? cuplan::Device::cuda(0) : cuplan::Device::cpu();
}

/// Prints and exits with 1 when `ok` is false.
inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "CHECK FAILED: %s\n", what);
    std::exit(1);
  }
  std::printf("ok: %s\n", what);
}

/// Reports the cuplan::Error that ended a sample on stderr, "cuplan error: <what>" (after "<name>: " where a name is
/// given), and returns the sample's exit code for it, 1.
inline int report_error(const cuplan::Error& error, const char* name = nullptr) {
  if (name != nullptr) std::fprintf(stderr, "%s: ", name);
  std::fprintf(stderr, "cuplan error: %s\n", error.what());
  return 1;
}

/// Runs the sample's `body`; then prints "<name>: all checks passed" and returns 0 (the exit code). A cuplan::Error
/// thrown by `body` is reported as "<name>: cuplan error: <what>" and gives 1. A failed check() has already exited.
template <class Body>
int run(const char* name, const Body& body) {
  try {
    body();
  } catch (const cuplan::Error& error) {
    return report_error(error, name);
  }
  std::printf("%s: all checks passed\n", name);
  return 0;
}

/// `n` values uniform in [-1, 1) drawn from `rng`, which the caller may go on drawing from.
template <class Real>
std::vector<Real> random_real(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<Real> u(-1, 1);
  std::vector<Real> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

/// `n` complex values with real and imaginary parts uniform in [-1, 1), the same for the same `seed`.
template <class Real>
std::vector<std::complex<Real>> random_complex(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> u(-1, 1);
  std::vector<std::complex<Real>> v(n);
  for (auto& x : v) x = {u(rng), u(rng)};
  return v;
}

/// Runs `rank(r)` for r = 0 .. count - 1, each on a thread of its own, and waits for all of them. A rank that throws
/// is reported on stderr with its number; returns false when any rank threw.
template <class Rank>
bool run_rank_threads(std::size_t count, const Rank& rank) {
  std::vector<std::thread> threads;
  std::mutex failure_lock;
  bool failed = false;
  for (std::size_t r = 0; r < count; ++r)
    threads.emplace_back([&, r] {
      try {
        rank(r);
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_lock);
        std::fprintf(stderr, "rank %zu: %s\n", r, e.what());
        failed = true;
      }
    });
  for (auto& t : threads) t.join();
  return !failed;
}

}  // namespace sample
