// SPDX-License-Identifier: Apache-2.0
// The stream-retired hook (see stream_retirement.hpp).

#include "runtime/stream_retirement.hpp"

#include <atomic>

namespace cuplan::detail {
namespace {

std::atomic<StreamRetiredHook> g_hook{nullptr};

}  // namespace

void set_stream_retired_hook(StreamRetiredHook hook) noexcept {
  g_hook.store(hook, std::memory_order_release);
}

void notify_stream_retired(cudaStream_t stream, int device) noexcept {
  if (const StreamRetiredHook hook = g_hook.load(std::memory_order_acquire)) hook(stream, device);
}

}  // namespace cuplan::detail
