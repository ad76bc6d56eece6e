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
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// What a route reads of its Convolution; ConvolutionImpl owns all of it and the route.
struct ConvolutionRunnerContext {
  const ConvolutionGeometry& geometry;
  const ExecutionTarget& target;
  PhaseOrder& order;
  PhaseStreams& streams;
};

/// One execute, validated by ConvolutionImpl.
struct ConvolutionCall {
  const std::optional<StreamRef>& stream;
  const EventList& after;
  const TensorRef* out = nullptr;  ///< the caller's out (nullptr: a new result)
  bool release_workspace = false;
  const TensorRef& operand;
};

class ConvolutionRunner {
 public:
  virtual ~ConvolutionRunner() = default;
  ConvolutionRunner(const ConvolutionRunner&) = delete;
  ConvolutionRunner& operator=(const ConvolutionRunner&) = delete;

  /// The plan phase on `stream`: plans, buffers, and the spectrum of `kernel` (null: keep the spectrum of an earlier
  /// plan); clears `pending_after` once waited for.
  virtual void plan(const std::optional<StreamRef>& stream, EventList& pending_after, const TensorRef* kernel) = 0;
  /// reset_kernel's phase: the spectrum of `kernel`, ordered after the object's last phase.
  virtual void set_kernel(const std::optional<StreamRef>& stream, const EventList& after, const TensorRef& kernel) = 0;
  virtual Tensor execute(const ConvolutionCall& call) = 0;
  /// reset_operand's phase (default: nothing to order, every execute returns when its result is written).
  virtual void order_new_operand(const std::optional<StreamRef>& /*stream*/) {}
  /// Plans, spectrum and buffers go; waits for the object's last phase first where they may still be in use.
  virtual void free() noexcept = 0;
  virtual std::size_t workspace_size() const noexcept = 0;
  /// `fused` or `separate`.
  virtual cuplan::ConvolutionRoute kind() const noexcept = 0;
  /// "cuFFT forward + product + cuFFT inverse on cuda:0", "FFTW, product in its chunked loop" (describe()).
  virtual std::string execution() const = 0;
  /// "cuda:0 (cuFFT)", "cpu (FFTW)" (a LibraryError's context).
  virtual std::string location() const = 0;

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
