// SPDX-License-Identifier: Apache-2.0
#pragma once
// CPU backend of RealTransform: FFTW guru64 r2r plans (REDFT00/10/01/11, RODFT00/10/01/11), float and double, one
// per direction, layout and alignment, made under FFTW's process-wide planner lock and run with FFTW's new-array
// execute functions (which may run from several threads at once).

#include <cstdint>
#include <vector>

#include "cuplan/fft.hpp"
#include "r2r/planner.hpp"

namespace cuplan::detail {

class FftwR2RPlan {
 public:
  /// `threads` 0: the library default (default_cpu_threads: one per 64 Ki elements, at most one per hardware thread).
  FftwR2RPlan(const R2RDecision& decision, int threads, Planning planning);
  ~FftwR2RPlan();
  FftwR2RPlan(const FftwR2RPlan&) = delete;
  FftwR2RPlan& operator=(const FftwR2RPlan&) = delete;

  /// Makes the plan of `direction` (in place or out of place) for arrays aligned as cuplan's allocations are, so
  /// that planning (measuring, with Planning::measure or patient) happens here and not in the first execute.
  void prepare(Direction direction, bool in_place);
  /// In place over `data`, laid out by the decision's out_strides, in `direction` (unnormalized).
  void execute_in_place(Direction direction, void* data);
  /// From `in` (the decision's in_strides; left unchanged) into `out` (out_strides). False, with nothing done,
  /// when FFTW has no plan that keeps the input (then copy and run in place).
  bool execute_out_of_place(Direction direction, const void* in, void* out);

 private:
  struct Slot {
    Direction direction;
    bool in_place;
    int in_alignment;
    int out_alignment;
    void* plan;  // null: FFTW could not plan it
  };
  void* plan_for(Direction direction, bool in_place, void* in, void* out);
  void* make_plan(Direction direction, bool in_place, void* in, void* out) const;

  R2RDecision decision_;
  bool double_precision_;
  int threads_;
  Planning planning_;
  std::vector<Slot> slots_;
};

}  // namespace cuplan::detail
