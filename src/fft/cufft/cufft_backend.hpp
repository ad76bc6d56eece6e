// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA backend: one cuFFT plan (cufftXtMakePlanMany, 64-bit layout, auto-allocation off) over the planning
// layer's layout, with the workspace owned by the caller. Execution loops over the batch dimensions that did not
// become the plan's batch; everything it needs is computed at plan time. Free of cuFFT's header, so that the CPU-only
// build compiles the callers against cufft_no_device.cpp instead.

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cuplan/errors.hpp"
#include "cuplan/fft.hpp"
#include "fft/callbacks/callback_set.hpp"
#include "fft/cufft/callback_compile.hpp"
#include "fft/planner.hpp"
#include "runtime/device_buffer.hpp"

namespace cuplan::detail {

/// cuFFT's own limits on a decided transform, stated once: NotSupported for half precision with a length that is
/// not a power of two. The cuFFT routes check it when the FFT is made; CufftPlan checks it again before planning.
/// (Pure, in the header: the CPU-only build's routes check it too.)
inline void check_cufft_supports(const LayoutDecision& d) {
  if (d.in_dtype.real() != f16) return;
  const AdvancedLayout& l = d.layout;
  for (int k = 0; k < l.rank; ++k)
    if (l.n[k] <= 0 || (l.n[k] & (l.n[k] - 1)) != 0)
      throw NotSupported(
          fmt::format("FFT: half precision ({}) needs power-of-two lengths in cuFFT, got length {} (lengths [{}])",
                      d.in_dtype.name(), l.n[k], fmt::join(std::span(l.n, static_cast<std::size_t>(l.rank)), ", ")));
}

/// cuFFT's work-area size for the decided layout on `device`: a plan made with auto-allocation off and destroyed at
/// once (what CufftPlan::workspace_size() reports for a plan without callbacks; nothing is allocated for the area).
std::size_t cufft_workspace_size(const LayoutDecision& decision, int device);

class CufftPlan {
 public:
  /// Plans on `device` (made current for the call). NotSupported where check_cufft_supports refuses the decision.
  /// `callbacks`: the prolog and epilog, compiled (or found compiled) for the device's architecture
  /// and linked into the plan (set between cufftCreate and the planning call, as cuFFT requires), their caller_info
  /// blocks allocated and written on `stream`; CallbackError when they cannot be compiled or linked.
  CufftPlan(const LayoutDecision& decision, int device, const CallbackSet* callbacks = nullptr,
            std::optional<StreamRef> stream = std::nullopt);
  ~CufftPlan();
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;

  std::size_t workspace_size() const noexcept { return workspace_size_; }
  /// Makes `stream` wait for the setup work that planning left queued on the device (nothing once it is done). The
  /// plan phase calls it on its stream; later phases are ordered after that phase.
  void order_setup_before(cudaStream_t stream);
  /// Binds `stream` and `workspace` when they differ from the last ones (no library call otherwise).
  void bind(cudaStream_t stream, void* workspace);
  /// Enqueues the transform of `in` into `out` on the bound stream.
  void execute(Direction direction, const void* in, void* out);
  /// Rewrites the device caller_info blocks on `stream` when the callbacks' user data changed since the last write
  /// (one comparison otherwise). Called before a transform, outside any graph capture.
  void update_callbacks(const CallbackSet& callbacks, cudaStream_t stream);

 private:
  void set_callbacks(const CallbackSet& callbacks, int device, StreamRef stream);

  int handle_ = 0;                                       ///< the cufftHandle (an int: checked in cufft_backend.cpp)
  void* caller_info_[2] = {nullptr, nullptr};            ///< what cufftXtSetJITCallback's caller_info arrays point to
  std::shared_ptr<const LtoCallback> callback_code_[2];  ///< prolog, epilog: kept while the plan lives
  DeviceBuffer callback_blocks_;                         ///< the two caller_info blocks cuFFT's kernels read
  std::uint64_t callbacks_version_ = 0;                  ///< CallbackSet::version() last written
  bool created_ = false;
  /// Recorded on the legacy default stream after planning, where cuFFT leaves setup work that the plan's
  /// transforms read; null once seen complete.
  cudaEvent_t planned_ = nullptr;
  std::size_t workspace_size_ = 0;
  FFTType type_;
  DType precision_;
  std::size_t in_element_ = 0, out_element_ = 0;
  std::vector<std::int64_t> in_offsets_, out_offsets_;
  cudaStream_t stream_ = nullptr;
  bool stream_set_ = false;
  void* workspace_ = nullptr;
  bool workspace_set_ = false;
};

}  // namespace cuplan::detail
