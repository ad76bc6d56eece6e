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
  TensorView buffer_view;  // the caller's view, for the overlap checks
};

/// The function forms' policy before it is checked and keyed: their cached plans share the area of the stream they
/// run on unless the call names another policy (automatic is shared there, owned in the class forms).
constexpr WorkAreaPolicy function_form_work_area(WorkAreaPolicy policy) noexcept {
  return policy == WorkAreaPolicy::automatic ? WorkAreaPolicy::shared : policy;
}

/// Checks the options (`who`: "FFT", "Matmul", naming the call) and resolves automatic to owned (the class forms'
/// default; the function forms resolve it to shared first, function_form_work_area). InvalidArgument
/// for a policy outside the enum, external without a buffer or with an empty one, a buffer with another policy, a
/// buffer not in device memory, not contiguous or not 256-byte aligned.
WorkAreaSpec resolve_work_area(WorkAreaPolicy policy, const std::optional<TensorView>& buffer, const char* who);

/// For operations whose operand is in host memory or that run on the CPU (`where`: "an operand in host memory",
/// "CPU execution"): InvalidArgument naming work_area_buffer when an external buffer is given, which they could not
/// use (their device memory is staging of their own). owned and shared are accepted: nothing is shared there.
void check_work_area_unused(const std::optional<TensorView>& buffer, const char* who, const char* where);

/// For a call's operand or output `view` (`operand`: "operand", "out", "a"), before any work: InvalidArgument
/// naming work_area_buffer and the operand when an external buffer (`policy` external) overlaps it, which the
/// library would overwrite mid-call. Nothing for the other policies. The function forms and the constructors call
/// it up front, the routes at every execute and kernel phase (WorkArea::check_apart): every path checks it.
void check_work_area_apart(WorkAreaPolicy policy, const std::optional<TensorView>& buffer, const TensorView& view,
                           const char* operand, const char* who);

/// The area one phase uses; the memory stays valid while the hold lives (a shared area that grows meanwhile is
/// released only after the hold ends, stream-ordered after the work enqueued with it).
class WorkAreaHold {
 public:
  WorkAreaHold() = default;
  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// The area as an i8 view, for the ordering checker (an operand the phase writes): a shared or external area,
  /// which other objects can use too; null for no area and for an owned one (the object's phases are ordered), which
  /// then builds no view.
  const TensorView* view() const noexcept { return view_ ? &*view_ : nullptr; }

 private:
  friend class WorkArea;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::shared_ptr<Storage> keep_;  // a shared area's memory
  std::optional<TensorView> view_;
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
  /// At every execute, before any work, for external: InvalidArgument naming the buffer and `operand` ("operand",
  /// "out") when the buffer overlaps `view`, which the library would then overwrite mid-transform. Inline: the other
  /// policies check nothing, and every execute asks for each operand.
  void check_apart(const TensorView& view, const char* operand) const {
    if (spec_.policy == WorkAreaPolicy::external)
      check_work_area_apart(spec_.policy, spec_.buffer_view, view, operand, who_);
  }
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
