// SPDX-License-Identifier: Apache-2.0
#pragma once
// NVTX ranges around phases, copies and staging steps, so cuplan's work shows by name in Nsight Systems. With no
// profiler attached an NVTX call returns at once (the header-only NVTX 3 checks one pointer). Names that describe an
// object are formatted once per object and phase (NvtxNames) and reused by every later call; per-chunk ranges carry
// the chunk index as a payload instead of a formatted name. NVTX ships with the CUDA toolkit: the CPU-only build
// (CUPLAN_HAS_CUDA 0) keeps the names and emits no ranges.

#include "cuplan/config.hpp"
#if CUPLAN_HAS_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cuplan::detail {

#if CUPLAN_HAS_CUDA
/// NVTX 3 fills its function table at the first call without a lock, so two threads whose first ranges start at
/// once race on it (ThreadSanitizer reports it). Initialising once behind a function-local static orders that
/// first call before every range; afterwards this costs one acquire load.
inline void nvtx_ready() noexcept {
  static const bool ready = (nvtxInitialize(nullptr), true);
  (void)ready;
}

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) noexcept {
    nvtx_ready();
    nvtxRangePushA(name);
  }
  /// A range with an integer payload (a chunk index), shown with the name; no string is formatted.
  NvtxRange(const char* name, std::int64_t payload) noexcept {
    nvtx_ready();
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    attributes.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    attributes.payload.llValue = payload;
    nvtxRangePushEx(&attributes);
  }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};
#else
/// The CPU-only build's range: no NVTX, nothing emitted.
class NvtxRange {
 public:
  explicit NvtxRange(const char* /*name*/) noexcept {}
  NvtxRange(const char* /*name*/, std::int64_t /*payload*/) noexcept {}
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};
#endif

/// The name of an object's range: `range` followed by the object's label in parentheses ("cuplan::Matmul::execute
/// (Matmul 128 x 32 x 64 batch 1 f32)"); `range` alone when the label is empty.
inline std::string nvtx_range_name(std::string_view range, std::string_view label) {
  std::string name(range);
  if (label.empty()) return name;
  name.reserve(range.size() + label.size() + 3);
  name.append(" (").append(label).append(")");
  return name;
}

/// The range names of one object, one per phase: formatted at the phase's first range, then reused, so a repeated
/// call formats nothing. `label` is called once per phase. Not thread-safe, like the objects that hold it.
template <std::size_t Phases>
class NvtxNames {
 public:
  template <class Label>
  const char* get(std::size_t phase, const char* range, const Label& label) noexcept {
    std::string& name = names_[phase];
    if (name.empty()) {
      try {
        name = nvtx_range_name(range, label());
      } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; the plain name still marks the phase
        return range;
      }
    }
    return name.c_str();
  }

 private:
  std::array<std::string, Phases> names_{};
};

}  // namespace cuplan::detail
