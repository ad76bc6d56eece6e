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

/// The name of cuplan's entry point that calls the user's function of `role` (checked_callback_source).
std::string callback_entry_symbol(CallbackRole role);
/// A callback's CUDA `source` as NVRTC compiles it: the user's text, then a static_assert that `symbol` has the
/// signature of `role` over `element` (its message names the callback `name` and the declaration expected), then
/// callback_entry_symbol(role) at global scope with C++ linkage, calling `symbol`.
std::string checked_callback_source(const std::string& source, const std::string& symbol, CallbackRole role,
                                    DType element, const std::string& name);

/// The text of cuplan/fft_callback_device.hpp that NVRTC compilations include.
const char* callback_device_header_text() noexcept;

}  // namespace cuplan::detail
