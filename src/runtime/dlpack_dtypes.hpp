// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuplan's dtypes as DLPack types (code and bits, one lane), one table for both directions: the export
// (runtime/dlpack.cpp) and the import of a DLTensor (runtime/tensor_view.cpp).

#include <cstdint>
#include <optional>

#include "cuplan/tensor.hpp"

namespace cuplan::detail {

struct DlpackDtype {
  DTypeCode dtype;
  std::uint8_t code;  ///< DLDataTypeCode
  std::uint8_t bits;
};

// CUDA's __nv_fp8_e4m3 has no infinities: DLPack's e4m3fn.
inline constexpr DlpackDtype dlpack_dtypes[] = {{DTypeCode::f16, dlpack::kDLFloat, 16},
                                                {DTypeCode::f32, dlpack::kDLFloat, 32},
                                                {DTypeCode::f64, dlpack::kDLFloat, 64},
                                                {DTypeCode::bf16, dlpack::kDLBfloat, 16},
                                                {DTypeCode::c32, dlpack::kDLComplex, 32},
                                                {DTypeCode::c64, dlpack::kDLComplex, 64},
                                                {DTypeCode::c128, dlpack::kDLComplex, 128},
                                                {DTypeCode::i8, dlpack::kDLInt, 8},
                                                {DTypeCode::i32, dlpack::kDLInt, 32},
                                                {DTypeCode::i64, dlpack::kDLInt, 64},
                                                {DTypeCode::f8_e4m3, dlpack::kDLFloat8_e4m3fn, 8},
                                                {DTypeCode::f8_e5m2, dlpack::kDLFloat8_e5m2, 8}};

/// The row of `dtype`; nullopt for a dtype DLPack has no code for.
inline std::optional<DlpackDtype> dlpack_of(DType dtype) noexcept {
  for (const DlpackDtype& row : dlpack_dtypes)
    if (row.dtype == dtype.code()) return row;
  return std::nullopt;
}

/// The dtype of a one-lane DLPack type (code, bits); nullopt for one cuplan has no dtype for.
inline std::optional<DType> dtype_of_dlpack(std::uint8_t code, std::uint8_t bits) noexcept {
  for (const DlpackDtype& row : dlpack_dtypes)
    if (row.code == code && row.bits == bits) return DType(row.dtype);
  return std::nullopt;
}

}  // namespace cuplan::detail
