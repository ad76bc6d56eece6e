// SPDX-License-Identifier: Apache-2.0
#pragma once
// GPU callbacks made ready for cufftXtSetJITCallback: CUDA source compiled to LTO-IR with NVRTC, and user LTO-IR
// checked with nvJitLink, each once per process for the same code, role, element type and architecture. Free of
// NVRTC's and nvJitLink's headers; the CPU-only build answers with callback_compile_no_device.cpp.

#include <memory>
#include <string>
#include <vector>

#include "cuplan/dtype.hpp"
#include "cuplan/fft_callbacks.hpp"
#include "fft/callbacks/callback_source.hpp"
#include "fft/callbacks/callback_types.hpp"

namespace cuplan::detail {

/// LTO-IR and the name of the function cuFFT calls (global scope, C++ linkage: cuFFT declares it by that name).
struct LtoCallback {
  std::vector<char> lto_ir;
  std::string symbol;
};

/// The LTO-IR of a callback (FFTCallback::Form::cuda_source or lto_ir) for `role` over `element` on GPUs of compute
/// capability `sm` (e.g. 90). Source: compiled by NVRTC with a check that `symbol` has the role's signature, behind
/// an entry point of cuplan's with the signature cuFFT declares; cached process-wide (fft_callback_stats() counts
/// compilations and hits). LTO-IR: linked once with a probe that calls `symbol` through the role's declaration, so that
/// a missing symbol, a parameter list other than the role's (part of the C++ name), or an architecture nvJitLink cannot
/// link fails here, with the log, rather than inside cuFFT's planning. CallbackError naming the callback, with the
/// compiler's or linker's log.
std::shared_ptr<const LtoCallback> lto_callback(const FFTCallback& callback, CallbackRole role, DType element, int sm);

}  // namespace cuplan::detail
