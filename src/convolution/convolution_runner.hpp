// SPDX-License-Identifier: Apache-2.0
#pragma once
// The execution route of a convolution: one class per way a planned convolution runs (CPU: FFTW; CUDA: separate
// cuFFT passes or the fused kernel), chosen once when the Convolution is made. A route owns its plans, the kernel's
// spectrum and its work buffers, and opens its phases by the object's stream rule (plan/phase.hpp).
// ConvolutionImpl keeps the lifecycle, the operands and the phases' order.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "convolution/planner.hpp"
#include "cuplan/convolution.hpp"
#include "plan/operation/operation_route.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// What a route reads of its Convolution; ConvolutionImpl owns all of it and the route.
struct ConvolutionRunnerContext : RouteContext {
  const ConvolutionGeometry& geometry;
};

/// One execute, validated by ConvolutionImpl (never in place: `out` or a new result).
using ConvolutionCall = OperationCall;

class ConvolutionRunner : public OperationRoute {
 public:
  /// The plan phase on `stream`: plans, buffers, and the spectrum of `kernel` (null: keep the spectrum of an earlier
  /// plan); clears `pending_after` once waited for.
  virtual void plan(const std::optional<StreamRef>& stream, EventList& pending_after, const TensorRef* kernel) = 0;
  /// reset_kernel's phase: the spectrum of `kernel`, ordered after the object's last phase.
  virtual void set_kernel(const std::optional<StreamRef>& stream, const EventList& after, const TensorRef& kernel) = 0;
  virtual Tensor execute(const ConvolutionCall& call) = 0;
  /// Every runner states its workspace (free() also drops the kernel's spectrum).
  std::size_t workspace_size() const noexcept override = 0;
  /// Bytes of the library work area as planned, exactly what WorkAreaPolicy::external needs (0 before plan()).
  virtual std::size_t work_area_size() const noexcept { return 0; }
  /// What work_area_size() reports once planned, without planning (nothing allocated).
  virtual std::size_t estimate_work_area_size() const { return 0; }
  /// `fused` or `separate`.
  virtual cuplan::ConvolutionRoute kind() const noexcept = 0;

 protected:
  explicit ConvolutionRunner(const ConvolutionRunnerContext& context) : context_(context) {}
  /// The caller's out as the result, or a new dense result in `device` memory (stream-ordered on `stream`).
  Tensor make_result(const ConvolutionCall& call, Device device, const std::optional<StreamRef>& stream) const;

  ConvolutionRunnerContext context_;
};

/// The CPU route (convolution/fftw).
std::unique_ptr<ConvolutionRunner> make_cpu_convolution_runner(const ConvolutionRunnerContext& context,
                                                               const ConvolutionOptions& options,
                                                               const TensorView& operand);

/// The device routes' choice (convolution/cuda): the geometry with the FFT lengths the route runs, whether the
/// fused kernel runs it, and why not when it does not.
struct DeviceConvolutionChoice {
  ConvolutionGeometry geometry;
  bool fused = false;
  /// Fused, 2D or 3D: the whole-transform kernel (one block an entry; geometry planned with every FFT length a power
  /// of two) instead of the column route.
  bool block = false;
  std::string not_fused;  ///< the reason, when not fused
};
/// NotSupported naming the reason when `route` is fused and the fused kernel cannot run the convolution.
DeviceConvolutionChoice choose_device_convolution(const ConvolutionRequest& request, const TensorView& operand,
                                                  cuplan::ConvolutionRoute route, int device);
/// The device route for `choice` (convolution/cuda).
std::unique_ptr<ConvolutionRunner> make_device_convolution_runner(const ConvolutionRunnerContext& context,
                                                                  const ConvolutionOptions& options,
                                                                  const DeviceConvolutionChoice& choice,
                                                                  const TensorView& operand);

}  // namespace cuplan::detail
