// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused FFT route's rules and plan (docs/fft.md, "Route choice"): the device route runs a transform as one
// kernel of cuplan's own (cuFFTDx, fft/fused_kernels) with the prolog and epilog inlined, where the rules allow it,
// instead of cuFFT with LTO callbacks. The rules are pure (tested without a GPU); the plan compiles (no GPU needed)
// and then loads and launches the kernel.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cuplan/fft.hpp"
#include "fft/callbacks/callback_set.hpp"
#include "fft/fused_kernels/fused_fft_kernel.hpp"
#include "fft/planner.hpp"
#include "runtime/device_buffer.hpp"

namespace cuplan::detail {

/// The longest transform cuFFTDx runs in one block for `precision` (f32 or f64) on compute capability `sm` (e.g.
/// 90: 32768 for f32, 16384 for f64); 0 for an architecture cuFFTDx does not support.
std::int64_t fused_fft_max_length(DType precision, int sm) noexcept;

/// The compute capability of CUDA device `device` as major * 10 + minor (e.g. 90).
int device_sm(int device);

/// What the rules look at besides the decided layout.
struct FusedFftContext {
  const FFTOptions& options;    ///< the route asked for, the prolog and epilog
  int sm = 0;                   ///< compute capability of the execution's device
  std::string headers_problem;  ///< fused_fft::headers_problem(): empty when the cuFFTDx headers are found
  /// Whether cuFFTDx has a kernel of its own for a length in a precision (fused_fft::is_native_length); empty: every
  /// length within the architecture's limit.
  std::function<bool(DType, std::int64_t)> native_length{};
};

/// Empty when the fused route can run the decided transform, else why not (one clause, e.g. "the transform has 2
/// axes; the fused kernel transforms one"). Pure.
std::string fused_fft_refusal(const LayoutDecision& decision, const FusedFftContext& context);

/// Whether a transform runs on the fused route: `automatic` takes it for a transform with a prolog or epilog
/// where it applies, `fused` always (NotSupported with the refusal where it does not apply), `cufft` never.
bool takes_fused_route(const LayoutDecision& decision, const FusedFftContext& context);

/// One planned transform on the fused route: the compiled and loaded kernel and the callbacks' caller_info blocks.
class FusedFftPlan {
 public:
  /// Compiles (or finds compiled) and loads the kernel for `device` (compute capability `sm`) and writes the
  /// callbacks' blocks on `stream`. CallbackError when the callbacks do not compile.
  FusedFftPlan(const LayoutDecision& decision, int device, int sm, const CallbackSet* callbacks, StreamRef stream);

  /// Rewrites the caller_info blocks on `stream` when the user data changed (one comparison otherwise).
  void update_callbacks(const CallbackSet& callbacks, cudaStream_t stream);
  /// Enqueues the transform of `in` into `out` on `stream`; the kernel multiplies by `scale` unless
  /// scales_in_kernel() is false (an epilog sees the unscaled value, and the caller scales after it).
  void execute(Direction direction, const void* in, void* out, double scale, cudaStream_t stream) const;
  bool scales_in_kernel() const noexcept { return !has_epilog_; }
  /// "fused cuFFTDx kernel (compiled with NVRTC)" for describe().
  std::string description() const;

 private:
  std::shared_ptr<const fused_fft::CompiledKernel> compiled_;
  std::shared_ptr<const fused_fft::LoadedKernel> kernel_;
  DeviceBuffer blocks_;  ///< the prolog's and the epilog's caller_info blocks
  void* info_[2] = {nullptr, nullptr};
  std::uint64_t callbacks_version_ = 0;
  bool has_epilog_ = false;
  std::int64_t rows_ = 0, idist_ = 0, odist_ = 0;
};

}  // namespace cuplan::detail
