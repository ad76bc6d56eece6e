// SPDX-License-Identifier: Apache-2.0
// scale_device: the walk of the compute output handed to the normalisation kernel (scale.cu).

#include "fft/cufft/scale.hpp"

#include "base/cuda_check.hpp"
#include "fft/cufft/scale_kernel.hpp"

namespace cuplan::detail {

void scale_device(void* data, DType dtype, const OutputWalk& walk, double scale, cudaStream_t stream) {
  static_assert(OutputWalk::max_rank == 11, "keep in step with the kernel's walk rank");
  const ScalePrecision precision = dtype.real() == f32   ? ScalePrecision::f32
                                   : dtype.real() == f64 ? ScalePrecision::f64
                                                         : ScalePrecision::f16;
  long long extent[OutputWalk::max_rank], stride[OutputWalk::max_rank];
  for (int d = 0; d < walk.rank; ++d) {
    extent[d] = walk.extent[d];
    stride[d] = walk.stride[d];
  }
  CUPLAN_CUDA_CHECK(
      launch_scale(data, precision, dtype.is_complex() ? 2 : 1, walk.rank, extent, stride, scale, stream));
}

}  // namespace cuplan::detail
