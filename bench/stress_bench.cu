// SPDX-License-Identifier: Apache-2.0
// Long randomized multi-stream stress run (tests/plan/stress_program.cuh):
//   stress_bench [--ops N] [--seed S] [--check] [--planted]
// Runs the program on 4 streams and on one, prints operations, time and mismatching tensors (goal 0); --check runs
// the multi-stream program under the ordering checker; --planted adds the missing-edge control (expects a catch).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../tests/plan/stress_program.cuh"

int main(int argc, char** argv) {
  using namespace cuplan::stress;
  int ops_count = 100'000;
  std::uint64_t seed = 1;
  bool check_on = false, planted = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ops") == 0 && i + 1 < argc) {
      ops_count = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--check") == 0) {
      check_on = true;
    } else if (std::strcmp(argv[i], "--planted") == 0) {
      planted = true;
    } else {
      std::fprintf(stderr, "usage: %s [--ops N] [--seed S] [--check] [--planted]\n", argv[0]);
      return 2;
    }
  }
  if (!cuplan::cuda_available()) {
    std::fprintf(stderr, "stress_bench: no CUDA device\n");
    return 2;
  }
  const std::vector<Op> ops = generate(seed, ops_count, planted);
  cuplan::set_checking(check_on);
  const auto start = std::chrono::steady_clock::now();
  Runner multi(seed, false);
  try {
    multi.run(ops);
  } catch (const cuplan::OrderingError& e) {
    std::printf("ordering checker: %s\n", e.what());
    return planted ? 0 : 1;
  }
  const auto a = multi.result();
  const double multi_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cuplan::set_checking(false);
  Runner single(seed, true);
  single.run(ops);
  const auto b = single.result();
  int differ = 0;
  for (std::size_t t = 0; t < a.size(); ++t) differ += a[t] != b[t] ? 1 : 0;
  std::printf("stress: seed %llu, %zu operations on 4 streams in %.2f s (checker %s): %d mismatching tensors of %zu\n",
              static_cast<unsigned long long>(seed), ops.size(), multi_s, check_on ? "on" : "off", differ, a.size());
  if (planted) std::printf("planted edge: %s\n", differ > 0 ? "caught by a mismatch" : "NOT caught");
  return planted ? (differ > 0 ? 0 : 1) : (differ == 0 ? 0 : 1);
}
