// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA backend of RealTransform: per transformed axis, either one pre-pass kernel (reordering, extension or
// pre-twiddle, with orthogonalize's input factors), one cuFFT plan of related length (algorithms.hpp) and one
// post-pass kernel (twiddle or unpermute, with the output factors and, on the last axis, the norm), or, where the
// route's rule fuses the axis (fused_rule.hpp; routes automatic and fused), one fused cuFFTDx kernel doing all three
// in registers. Axis after axis, each reads the
// previous axis's result, so several axes and in-place operands need no extra copy. cuFFT plans for both
// directions; their workspace and the two row buffers are one work area, the route's (plan/work_area.hpp); a fused
// axis needs none of it.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/non_copyable.hpp"
#include "cuplan/fft.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "r2r/algorithms.hpp"
#include "r2r/planner.hpp"

namespace cuplan::detail {

namespace fused_r2r {
struct FusedR2RLauncher;
}  // namespace fused_r2r

class CufftR2R : NonCopyable {
 public:
  /// Decides each axis's route (fused_axes(): NotSupported, prefixed by `who`, when `route` is fused and no axis
  /// qualifies; `automatic` also keeps the passes on an axis whose kernel needs more shared memory than the device
  /// allows). `first_source_strides`: the layout execute's `in` has (the operand's, or the result's for a staged
  /// host operand).
  CufftR2R(const R2RDecision& decision, int device, FFTRoute route, const Strides& first_source_strides,
           const char* who);
  ~CufftR2R();

  /// Readies the fused kernels on the current device, then makes the cuFFT plans of both directions (no workspace
  /// is allocated yet). Where the build holds no code for the device's architecture or the device's shared memory
  /// per block is short of a kernel's, route `fused` raises NotSupported and `automatic` puts those axes on the
  /// passes (describe() then says why).
  void plan();
  /// Enqueues the transform of `in` (laid out by `in_strides`, device memory) into `out` (the decision's
  /// out_strides) on `stream`, with `workspace` of workspace_size() bytes (the route's work area); `in` may be
  /// `out`. Allocates nothing, so a graph may capture it.
  void execute(Direction direction, const void* in, const Strides& in_strides, void* out, void* workspace,
               cudaStream_t stream);
  /// Bytes the planned transform needs on the device (row buffers and cuFFT workspace).
  std::size_t workspace_size() const noexcept;
  /// "axis 0 dct2: even/odd reorder + R2C(n) + twiddle; axis 1 dct2: fused cuFFTDx kernel (R2C 4096)" for
  /// `direction`.
  std::string algorithms(Direction direction) const;

 private:
  struct AxisPlan {
    AxisAlgorithm algorithm;
    std::int64_t rows = 0;
    bool interleaved = false;  // the axis is not the result's innermost: FFT rows interleaved (r2r_kernels.hpp)
    const fused_r2r::FusedR2RLauncher* fused = nullptr;  // the fused kernel, or nullptr for the passes
    std::optional<int> handle;                           // cufftHandle once made; none on a fused axis
    std::size_t work_bytes = 0;
    std::string not_fused;  // on the passes: why not fused (routes automatic and fused), for describe()
  };
  // Why a fused axis's kernel cannot run on the device (empty when it can), and what the caller can do about it.
  struct FusedRefusal {
    std::string why;
    const char* remedy = "";
  };
  // Readies the axis's fused kernel on the current device; a refusal where the build holds no code for it or its
  // shared memory per block is more than the device allows.
  FusedRefusal prepare_fused(const AxisPlan& p) const;
  // The shared memory clause of prepare_fused() alone (a device attribute, no GPU work).
  std::string shared_memory_refusal(const AxisPlan& p) const;
  // Whether axis `i`'s post-pass writes axis i+1's FFT input directly (r2r_kernels.hpp, R2RBridge).
  static bool bridges_to_next(const std::vector<AxisPlan>& plans, std::size_t i);
  // Puts axis `i` (`p`, forward or inverse) on the passes: its row buffers count in the work area.
  void use_passes(AxisPlan& p, std::size_t i, std::string not_fused);

  R2RDecision decision_;
  int device_;
  FFTRoute route_;
  const char* who_;
  std::vector<AxisPlan> forward_;  // one per transformed axis, in order
  std::vector<AxisPlan> inverse_;
  std::size_t a_bytes_ = 0, b_bytes_ = 0, work_bytes_ = 0;
  bool planned_ = false;
};

}  // namespace cuplan::detail
