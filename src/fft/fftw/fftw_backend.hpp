// SPDX-License-Identifier: Apache-2.0
#pragma once
// CPU backend: FFTW guru64 plans (float and double) over the planning layer's layout.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cuplan/fft.hpp"
#include "fft/callbacks/callback_set.hpp"
#include "fft/planner.hpp"

namespace cuplan::detail {

class ChunkWorkers;

/// One FFTW plan per direction needed (C2C: both, planned on first use). Planning takes FFTW's global planner
/// lock (FFTW's planner is not thread-safe); execution does not. Plans are made for the arrays' alignment only and
/// reused with FFTW's new-array execute functions. FFTW_ESTIMATE and plans from wisdom are made on a small probe
/// block (they never touch the arrays); FFTW_MEASURE / FFTW_PATIENT of a problem the wisdom lacks on scratch arrays
/// of the operands' extent (measuring overwrites them).
class FftwPlan {
 public:
  /// NotSupported for half precision. `threads` 0 means all hardware threads.
  FftwPlan(const LayoutDecision& decision, int threads, Planning planning = Planning::estimate);
  ~FftwPlan();
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;

  /// Transforms `in` into `out` (the compute buffers of the decision) and scales the result by `scale` (1: none).
  /// Re-plans when the arrays' alignment differs from the one planned for.
  void execute(Direction direction, void* in, void* out, double scale);
  /// The same with host callbacks (fftw_callbacks.cpp): chunk by chunk along the outermost batch dimension, each
  /// chunk's prolog, transform and epilog run back to back while the chunk is in cache. The prolog's values go to
  /// a chunk-sized scratch buffer (the operand is never written); the epilog stores over the chunk's output.
  void execute(Direction direction, void* in, void* out, double scale, CallbackSet& callbacks);

 private:
  void* make_plan(const LayoutDecision& decision, Direction direction, int in_alignment, int out_alignment,
                  int threads) const;
  void destroy(void* plan) const noexcept;
  /// Runs `plan` (one of this plan's FFTW plans) on `in` and `out`: FFTW's new-array execute functions, which may
  /// run from several threads at once.
  void run(void* plan, void* in, void* out) const;
  /// FFTW's alignment class of `p` for this plan's precision (a plan is made for, and runs on, one class).
  int alignment_of(void* p) const;
  /// A plan of `count` outer batch entries of a chunk (callbacks), made on first use for these alignments.
  void* chunk_plan(Direction direction, std::int64_t count, bool from_scratch, int in_alignment, int out_alignment);

  LayoutDecision decision_;
  bool double_precision_;
  int threads_;
  Planning planning_;
  struct Slot {
    void* plan = nullptr;
    int in_alignment = -1;
    int out_alignment = -1;
  };
  Slot slots_[2];  // forward, inverse
  struct ChunkSlot {
    Direction direction;
    std::int64_t count;
    bool from_scratch;
    int in_alignment, out_alignment;
    void* plan;
  };
  std::vector<ChunkSlot> chunk_slots_;
  std::vector<unsigned char> scratch_;     // the prolog's values of one chunk per worker
  std::unique_ptr<ChunkWorkers> workers_;  // the threads that share the chunks, kept between executes
};

/// Plans of a measuring effort (FFTW_MEASURE / FFTW_PATIENT) made in this process: `measured` ran the planner's
/// timing, `from_wisdom` were found in FFTW's wisdom without timing anything. Tests read them to see that a loaded
/// wisdom spares the measuring.
struct FftwPlanCounts {
  long measured = 0;
  long from_wisdom = 0;
};
FftwPlanCounts fftw_plan_counts() noexcept;

/// FFTW's accumulated wisdom (double and single precision), under the planner lock: the tuning file's sections
/// "fftw-double" and "fftw-single", which this backend registers (fftw_backend.cpp).
struct FftwWisdom {
  std::string double_precision, single_precision;
};
FftwWisdom export_fftw_wisdom();
/// Adds `wisdom` to FFTW's, both precisions or neither. Null on success, else the precision FFTW rejected
/// ("double precision" / "single precision").
const char* import_fftw_wisdom(const FftwWisdom& wisdom);

/// Multiplies every element of the compute output by `scale` on the host.
void scale_host(void* data, DType dtype, const OutputWalk& walk, double scale);

}  // namespace cuplan::detail
