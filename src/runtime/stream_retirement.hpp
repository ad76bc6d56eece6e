// SPDX-License-Identifier: Apache-2.0
#pragma once
// The plan layer keeps state per stream (the shared work areas, plan/work_area.cpp). When a cuplan-made Stream is
// destroyed, that state must go with it, or it would keep the stream and its memory until the process ends. The
// runtime cannot include the plan layer, so the plan layer installs a hook here and ~Stream calls it.

#include <cuda_runtime_api.h>

namespace cuplan::detail {

/// Drops what is kept for `stream` of `device`; runs while the stream is still valid (it may enqueue frees on it).
using StreamRetiredHook = void (*)(cudaStream_t stream, int device) noexcept;

/// Installs the hook (the plan layer, once; a later call replaces it).
void set_stream_retired_hook(StreamRetiredHook hook) noexcept;
/// Calls the installed hook, if any: a cuplan-made CUDA stream's Stream object is going away.
void notify_stream_retired(cudaStream_t stream, int device) noexcept;

}  // namespace cuplan::detail
