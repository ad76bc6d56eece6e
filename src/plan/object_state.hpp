// SPDX-License-Identifier: Apache-2.0
#pragma once
// The lifecycle checks of a stateful object (planned, operand present, freed) with uniform StateError messages.

namespace cuplan::detail {

/// Lifecycle of a stateful object with uniform StateError messages ("FFT.execute: called after free()").
class ObjectState {
 public:
  explicit ObjectState(const char* type_name) : type_name_(type_name) {}
  void require_alive(const char* method) const;
  void require_planned(const char* method) const;
  void require_operand(const char* method) const;
  void set_planned(bool planned) noexcept { planned_ = planned; }
  void set_operand(bool present) noexcept { operand_ = present; }
  void set_freed() noexcept {
    freed_ = true;
    planned_ = false;
    operand_ = false;
  }
  bool freed() const noexcept { return freed_; }

 private:
  const char* type_name_;
  bool planned_ = false;
  bool operand_ = false;
  bool freed_ = false;
};

}  // namespace cuplan::detail
