// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one mapping from cuplan dtypes to the CUDA library data types (cudaDataType), used by every backend.

#include <library_types.h>

#include <optional>

#include "cuplan/dtype.hpp"

namespace cuplan::detail {

/// The cudaDataType of `dtype`, or nothing for a dtype no CUDA math library takes (integers).
constexpr std::optional<cudaDataType> cuda_data_type(DType dtype) noexcept {
  switch (dtype.code()) {
    case DTypeCode::f16:
      return CUDA_R_16F;
    case DTypeCode::bf16:
      return CUDA_R_16BF;
    case DTypeCode::f32:
      return CUDA_R_32F;
    case DTypeCode::f64:
      return CUDA_R_64F;
    case DTypeCode::c32:
      return CUDA_C_16F;
    case DTypeCode::c64:
      return CUDA_C_32F;
    case DTypeCode::c128:
      return CUDA_C_64F;
    case DTypeCode::f8_e4m3:
      return CUDA_R_8F_E4M3;
    case DTypeCode::f8_e5m2:
      return CUDA_R_8F_E5M2;
    default:
      return std::nullopt;
  }
}

}  // namespace cuplan::detail
