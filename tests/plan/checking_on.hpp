// SPDX-License-Identifier: Apache-2.0
#pragma once
// A scope in which the ordering checker is on.

#include "cuplan/checking.hpp"

namespace cuplan::testing {

/// Turns the checker on for one scope and restores the previous setting.
class CheckingOn {
 public:
  CheckingOn() : before_(checking()) { set_checking(true); }
  ~CheckingOn() { set_checking(before_); }
  CheckingOn(const CheckingOn&) = delete;
  CheckingOn& operator=(const CheckingOn&) = delete;

 private:
  bool before_;
};

}  // namespace cuplan::testing
