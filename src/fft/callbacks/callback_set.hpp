// SPDX-License-Identifier: Apache-2.0
#pragma once
// The prolog and epilog of one planned FFT, shared by both backends: checked against the transform when the object
// is made (form against the execution, element types, layout) and their caller_info blocks on the host. FFTW passes
// the host blocks' addresses; cuFFT's plan (fft/cufft) compiles the code and keeps device copies of the blocks,
// rewritten when version() changes.

#include <cstdint>
#include <optional>

#include "cuplan/fft.hpp"
#include "fft/callbacks/callback_types.hpp"
#include "fft/planner.hpp"
#include "plan/execution_target.hpp"

namespace cuplan::detail {

class CallbackSet {
 public:
  /// Checks `options.prolog` and `options.epilog` against the decided transform and its execution; CallbackError
  /// for a form the execution cannot run, an element type with no callback (half precision), a host callable of the
  /// wrong role or element type, a staged host operand on CUDA, or a layout whose offsets are ambiguous.
  CallbackSet(const FFTOptions& options, const LayoutDecision& decision, const ExecutionTarget& target);

  bool has(CallbackRole role) const noexcept { return static_cast<bool>(callback(role)); }
  const FFTCallback& callback(CallbackRole role) const noexcept {
    return role == CallbackRole::prolog ? prolog_ : epilog_;
  }
  /// The host block of `role` (CPU execution passes its address as caller_info).
  fft_callback::Info* host_info(CallbackRole role) noexcept { return &info_[index(role)]; }
  const fft_callback::Info& info(CallbackRole role) const noexcept { return info_[index(role)]; }
  /// A new user data pointer; StateError naming `method` when `role` has no callback.
  void set_user_data(CallbackRole role, void* user_data, const char* method);
  /// Applies both overrides of one execute (either may be empty).
  void set_user_data(const std::optional<void*>& prolog, const std::optional<void*>& epilog, const char* method) {
    if (prolog) set_user_data(CallbackRole::prolog, *prolog, method);
    if (epilog) set_user_data(CallbackRole::epilog, *epilog, method);
  }
  /// The element type `role` loads or stores.
  DType element(CallbackRole role) const noexcept { return element_[index(role)]; }
  /// Counts changes of the host blocks (starts at 1): a device copy older than this is rewritten.
  std::uint64_t version() const noexcept { return version_; }
  static int index(CallbackRole role) noexcept { return role == CallbackRole::prolog ? 0 : 1; }

 private:
  void check(CallbackRole role, const LayoutDecision& decision, const ExecutionTarget& target) const;

  FFTCallback prolog_, epilog_;
  fft_callback::Info info_[2]{};
  DType element_[2];
  std::uint64_t version_ = 1;
};

}  // namespace cuplan::detail
