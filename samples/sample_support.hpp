// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the samples: the exit code for "needs a GPU, none here" and a result check that exits non-zero.

#include <cstdio>
#include <cstdlib>

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

}  // namespace sample
