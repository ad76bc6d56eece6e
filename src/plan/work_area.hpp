// SPDX-License-Identifier: Apache-2.0
#pragma once
// Library work areas (cuFFT's work area, cuBLASLt's workspace) by policy (docs/memory.md, "Work areas"): an object's
// own buffer (owned), the area of the device and stream the phase runs on (shared, one per device and stream, grown
// to its largest user), or the caller's buffer (external). Every operation's route holds one WorkArea and asks it
// for the area at each phase that enqueues library work; the backend binds what it gets (cufftSetWorkArea when the
// pointer changed, cuBLASLt at every call).

#include <cstddef>
#include <memory>
#include <optional>

#include "cuplan/execution.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/device_buffer.hpp"

namespace cuplan::detail {

class Storage;

/// cuFFT and cuBLASLt read their work areas with vector loads: an external buffer must be aligned like the blocks
/// cudaMallocAsync returns.
inline constexpr std::size_t work_area_alignment = 256;

/// The work-area options of one object, checked and resolved: the policy (never automatic) and, for external, the
/// caller's buffer.
struct WorkAreaSpec {
  WorkAreaPolicy policy = WorkAreaPolicy::owned;
  void* buffer = nullptr;
  std::size_t buffer_bytes = 0;
  int buffer_device = -1;
};

/// Checks the options (`who`: "FFT", "Matmul", naming the call) and resolves automatic to owned (the function forms
/// ask for shared before they make a plan: function_form_work_area). InvalidArgument for a policy outside the enum,
/// external without a buffer, a buffer with another policy, a buffer not in device memory or not 256-byte aligned.
WorkAreaSpec resolve_work_area(WorkAreaPolicy policy, const std::optional<TensorView>& buffer, const char* who);

/// The area one phase uses; the memory stays valid while the hold lives (a shared area that grows meanwhile is
/// released only after the hold ends, stream-ordered after the work enqueued with it).
/// The policy of a function form's cached plan: automatic means shared there.
inline WorkAreaPolicy function_form_work_area(WorkAreaPolicy policy) noexcept {
  return policy == WorkAreaPolicy::automatic ? WorkAreaPolicy::shared : policy;
}

class WorkAreaHold {
 public:
  WorkAreaHold() = default;
  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// The area as an i8 view, for the ordering checker (an operand the phase writes); empty for no area.
  const TensorView& view() const noexcept { return view_; }

 private:
  friend class WorkArea;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::shared_ptr<Storage> keep_;  // a shared area's memory
  TensorView view_;
};

class WorkArea {
 public:
  explicit WorkArea(WorkAreaSpec spec = {}, const char* who = "") : spec_(spec), who_(who) {}
  ~WorkArea();
  WorkArea(const WorkArea&) = delete;
  WorkArea& operator=(const WorkArea&) = delete;

  WorkAreaPolicy policy() const noexcept { return spec_.policy; }
  /// At plan time, for external: InvalidArgument naming the buffer when it is smaller than `bytes` or on another
  /// device than `device`. Nothing for the other policies.
  void check(std::size_t bytes, int device) const;
  /// The area for work enqueued on `stream` of `device` next: at least `bytes` (no area for 0 bytes).
  WorkAreaHold acquire(std::size_t bytes, int device, StreamRef stream);
  /// owned: frees the buffer (stream-ordered after its uses); shared and external: nothing is held between phases.
  void release() noexcept;
  /// Bytes this object holds by itself between phases (an owned buffer; 0 for shared and external).
  std::size_t held_bytes() const noexcept { return owned_.size(); }

 private:
  void count_owned(std::ptrdiff_t areas, std::ptrdiff_t bytes) noexcept;
  WorkAreaSpec spec_;
  const char* who_;
  DeviceBuffer owned_;
  int owned_device_ = -1;
};

}  // namespace cuplan::detail
