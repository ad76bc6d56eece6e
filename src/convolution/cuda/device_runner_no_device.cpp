// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's device runner: there is no CUDA execution to choose (resolve_execution refuses it first), so
// these are never reached with a valid target; they answer NotSupported like a machine without a GPU.

#include "convolution/convolution_runner.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {

DeviceConvolutionChoice choose_device_convolution(const ConvolutionRequest& /*request*/, const TensorView& /*operand*/,
                                                  cuplan::ConvolutionRoute /*route*/, int /*device*/) {
  throw NotSupported("Convolution: no CUDA device: this is the CPU-only build (CUPLAN_HAS_CUDA 0)");
}

std::unique_ptr<ConvolutionRunner> make_device_convolution_runner(const ConvolutionRunnerContext& /*context*/,
                                                                  const ConvolutionOptions& /*options*/,
                                                                  const DeviceConvolutionChoice& /*choice*/,
                                                                  const TensorView& /*operand*/) {
  throw NotSupported("Convolution: no CUDA device: this is the CPU-only build (CUPLAN_HAS_CUDA 0)");
}

}  // namespace cuplan::detail
