// SPDX-License-Identifier: Apache-2.0
#pragma once
// Element types: a small value type with size, name and traits, and the mapping from C++ element types.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "cuplan/cuda_compat.hpp"
#include "cuplan/export.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// The element types cuplan knows, as DType holds them (the constants cuplan::f32, cuplan::c64, ... name them).
enum class DTypeCode : std::uint8_t {
  f16,      ///< IEEE half precision (`__half`)
  bf16,     ///< bfloat16 (`__nv_bfloat16`)
  f32,      ///< `float`
  f64,      ///< `double`
  c32,      ///< complex of two f16 (cuFFT half-precision complex, `__half2`)
  c64,      ///< `std::complex<float>`
  c128,     ///< `std::complex<double>`
  f8_e4m3,  ///< fp8 with 4 exponent and 3 mantissa bits (`__nv_fp8_e4m3`)
  f8_e5m2,  ///< fp8 with 5 exponent and 2 mantissa bits (`__nv_fp8_e5m2`)
  i8,       ///< `std::int8_t`
  i32,      ///< `std::int32_t`
  i64,      ///< `std::int64_t`
};

/// An element type. Cheap to copy and compare; `c64.real()` is `f32`, `f32.complex()` is `c64`.
class CUPLAN_API DType {
 public:
  /// f32.
  constexpr DType() = default;
  /// The type `code` names.
  constexpr explicit DType(DTypeCode code) : code_(code) {}

  /// The code of this type.
  constexpr DTypeCode code() const { return code_; }
  /// Size of one element in bytes.
  constexpr std::size_t size() const {
    switch (code_) {
      case DTypeCode::f8_e4m3:
      case DTypeCode::f8_e5m2:
      case DTypeCode::i8:
        return 1;
      case DTypeCode::f16:
      case DTypeCode::bf16:
        return 2;
      case DTypeCode::f32:
      case DTypeCode::c32:
      case DTypeCode::i32:
        return 4;
      case DTypeCode::f64:
      case DTypeCode::c64:
      case DTypeCode::i64:
        return 8;
      case DTypeCode::c128:
        return 16;
    }
    return 0;
  }
  /// Short name: "f16", "bf16", "f32", "f64", "c32", "c64", "c128", "f8_e4m3", "f8_e5m2", "i8", "i32", "i64".
  constexpr std::string_view name() const {
    switch (code_) {
      case DTypeCode::f16:
        return "f16";
      case DTypeCode::bf16:
        return "bf16";
      case DTypeCode::f32:
        return "f32";
      case DTypeCode::f64:
        return "f64";
      case DTypeCode::c32:
        return "c32";
      case DTypeCode::c64:
        return "c64";
      case DTypeCode::c128:
        return "c128";
      case DTypeCode::f8_e4m3:
        return "f8_e4m3";
      case DTypeCode::f8_e5m2:
        return "f8_e5m2";
      case DTypeCode::i8:
        return "i8";
      case DTypeCode::i32:
        return "i32";
      case DTypeCode::i64:
        return "i64";
    }
    return "?";
  }
  /// True for c32, c64 and c128.
  constexpr bool is_complex() const {
    return code_ == DTypeCode::c32 || code_ == DTypeCode::c64 || code_ == DTypeCode::c128;
  }
  /// True for i8, i32 and i64.
  constexpr bool is_integer() const {
    return code_ == DTypeCode::i8 || code_ == DTypeCode::i32 || code_ == DTypeCode::i64;
  }
  /// True for f8_e4m3 and f8_e5m2.
  constexpr bool is_fp8() const { return code_ == DTypeCode::f8_e4m3 || code_ == DTypeCode::f8_e5m2; }
  /// True for the real floating-point types (f16, bf16, f32, f64 and the fp8 types).
  constexpr bool is_floating() const { return !is_integer() && !is_complex(); }
  /// The real type of a complex type (itself for a real type).
  constexpr DType real() const {
    switch (code_) {
      case DTypeCode::c32:
        return DType(DTypeCode::f16);
      case DTypeCode::c64:
        return DType(DTypeCode::f32);
      case DTypeCode::c128:
        return DType(DTypeCode::f64);
      default:
        return *this;
    }
  }
  /// The complex type of matching precision (itself for a complex type); f16/f32/f64 only.
  constexpr DType complex() const {
    switch (code_) {
      case DTypeCode::f16:
        return DType(DTypeCode::c32);
      case DTypeCode::f32:
        return DType(DTypeCode::c64);
      case DTypeCode::f64:
        return DType(DTypeCode::c128);
      default:
        return *this;
    }
  }
  /// Required alignment of a pointer to this type, in bytes: the element size (for complex types the full element
  /// size, as cuFFT and cuBLASLt expect).
  constexpr std::size_t alignment() const { return size(); }

  /// Same code.
  friend constexpr bool operator==(DType a, DType b) { return a.code_ == b.code_; }

 private:
  DTypeCode code_ = DTypeCode::f32;
};

/// \name DType constants
/// @{

/// The DType of each element type, named as its DTypeCode.
inline constexpr DType f16{DTypeCode::f16};
inline constexpr DType bf16{DTypeCode::bf16};
inline constexpr DType f32{DTypeCode::f32};
inline constexpr DType f64{DTypeCode::f64};
inline constexpr DType c32{DTypeCode::c32};
inline constexpr DType c64{DTypeCode::c64};
inline constexpr DType c128{DTypeCode::c128};
inline constexpr DType f8_e4m3{DTypeCode::f8_e4m3};
inline constexpr DType f8_e5m2{DTypeCode::f8_e5m2};
inline constexpr DType i8{DTypeCode::i8};
inline constexpr DType i32{DTypeCode::i32};
inline constexpr DType i64{DTypeCode::i64};
/// @}

/// The DType of the C++ element type `T` as `value`; specialised for every element type cuplan knows (see
/// DTypeCode), left undefined for any other type, so that an unknown type does not compile.
template <class T>
struct dtype_traits;
/// `half` (CUDA's `__half`) is f16.
template <>
struct dtype_traits<half> {
  static constexpr DType value = f16;  ///< f16
};
/// `bfloat16` (CUDA's `__nv_bfloat16`) is bf16.
template <>
struct dtype_traits<bfloat16> {
  static constexpr DType value = bf16;  ///< bf16
};
/// `float` is f32.
template <>
struct dtype_traits<float> {
  static constexpr DType value = f32;  ///< f32
};
/// `double` is f64.
template <>
struct dtype_traits<double> {
  static constexpr DType value = f64;  ///< f64
};
/// `half2` (CUDA's `__half2`) is c32.
template <>
struct dtype_traits<half2> {
  static constexpr DType value = c32;  ///< c32
};
/// `std::complex<float>` is c64.
template <>
struct dtype_traits<std::complex<float>> {
  static constexpr DType value = c64;  ///< c64
};
/// `std::complex<double>` is c128.
template <>
struct dtype_traits<std::complex<double>> {
  static constexpr DType value = c128;  ///< c128
};
/// `float8_e4m3` (CUDA's `__nv_fp8_e4m3`) is f8_e4m3.
template <>
struct dtype_traits<float8_e4m3> {
  static constexpr DType value = f8_e4m3;  ///< f8_e4m3
};
/// `float8_e5m2` (CUDA's `__nv_fp8_e5m2`) is f8_e5m2.
template <>
struct dtype_traits<float8_e5m2> {
  static constexpr DType value = f8_e5m2;  ///< f8_e5m2
};
/// `std::int8_t` is i8.
template <>
struct dtype_traits<std::int8_t> {
  static constexpr DType value = i8;  ///< i8
};
/// `std::int32_t` is i32.
template <>
struct dtype_traits<std::int32_t> {
  static constexpr DType value = i32;  ///< i32
};
/// `std::int64_t` is i64.
template <>
struct dtype_traits<std::int64_t> {
  static constexpr DType value = i64;  ///< i64
};

/// `dtype_of<T>` maps a C++ element type (cv-qualifiers ignored) to its DType; unknown types do not compile.
template <class T>
inline constexpr DType dtype_of = dtype_traits<std::remove_cv_t<T>>::value;

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
