// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GPU callback's CUDA source as cuplan's NVRTC compilations take it, shared by the backends that compile callbacks
// (cuFFT's LTO callbacks in fft/cufft, the fused kernel in fft/fused_kernels): the user's text, a check of the
// function's signature and cuplan's entry point that calls it.

#include <string>

#include "cuplan/dtype.hpp"
#include "fft/callbacks/callback_types.hpp"

namespace cuplan::detail {

/// The name of cuplan's entry point that calls the user's function of `role` (checked_callback_source).
std::string callback_entry_symbol(CallbackRole role);
/// A callback's CUDA `source` as NVRTC compiles it: the user's text, then a static_assert that `symbol` has the
/// signature of `role` over `element` (its message names the callback `name` and the declaration expected), then
/// callback_entry_symbol(role) at global scope with C++ linkage, calling `symbol`.
std::string checked_callback_source(const std::string& source, const std::string& symbol, CallbackRole role,
                                    DType element, const std::string& name);

/// The text of cuplan/fft_callback_device.hpp that NVRTC compilations include (generated when configuring; empty in
/// the CPU-only build).
const char* callback_device_header_text() noexcept;

}  // namespace cuplan::detail
