// SPDX-License-Identifier: Apache-2.0
// Element types: sizes, names, real/complex pairs and the C++ type mapping.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuplan/dtype.hpp"

namespace cuplan {
namespace {

TEST(DType, SizesMatchTheCppTypes) {
  EXPECT_EQ(f16.size(), sizeof(cuplan::half));
  EXPECT_EQ(bf16.size(), sizeof(cuplan::bfloat16));
  EXPECT_EQ(f32.size(), sizeof(float));
  EXPECT_EQ(f64.size(), sizeof(double));
  EXPECT_EQ(c32.size(), sizeof(cuplan::half2));
  EXPECT_EQ(c64.size(), sizeof(std::complex<float>));
  EXPECT_EQ(c128.size(), sizeof(std::complex<double>));
  EXPECT_EQ(f8_e4m3.size(), 1u);
  EXPECT_EQ(f8_e5m2.size(), 1u);
  EXPECT_EQ(i8.size(), 1u);
  EXPECT_EQ(i32.size(), 4u);
  EXPECT_EQ(i64.size(), 8u);
}

TEST(DType, Names) {
  EXPECT_EQ(f16.name(), "f16");
  EXPECT_EQ(bf16.name(), "bf16");
  EXPECT_EQ(f32.name(), "f32");
  EXPECT_EQ(f64.name(), "f64");
  EXPECT_EQ(c32.name(), "c32");
  EXPECT_EQ(c64.name(), "c64");
  EXPECT_EQ(c128.name(), "c128");
  EXPECT_EQ(f8_e4m3.name(), "f8_e4m3");
  EXPECT_EQ(f8_e5m2.name(), "f8_e5m2");
  EXPECT_EQ(i32.name(), "i32");
}

TEST(DType, Traits) {
  for (DType t : {c32, c64, c128}) {
    EXPECT_TRUE(t.is_complex()) << t.name();
    EXPECT_FALSE(t.is_floating()) << t.name();
    EXPECT_FALSE(t.is_integer()) << t.name();
  }
  for (DType t : {f16, bf16, f32, f64, f8_e4m3, f8_e5m2}) {
    EXPECT_TRUE(t.is_floating()) << t.name();
    EXPECT_FALSE(t.is_complex()) << t.name();
  }
  for (DType t : {i8, i32, i64}) EXPECT_TRUE(t.is_integer()) << t.name();
  EXPECT_TRUE(f8_e4m3.is_fp8());
  EXPECT_TRUE(f8_e5m2.is_fp8());
  EXPECT_FALSE(f16.is_fp8());
}

TEST(DType, RealAndComplexPairs) {
  EXPECT_EQ(c32.real(), f16);
  EXPECT_EQ(c64.real(), f32);
  EXPECT_EQ(c128.real(), f64);
  EXPECT_EQ(f16.complex(), c32);
  EXPECT_EQ(f32.complex(), c64);
  EXPECT_EQ(f64.complex(), c128);
  EXPECT_EQ(f32.real(), f32);
  EXPECT_EQ(c64.complex(), c64);
  for (DType t : {c32, c64, c128}) EXPECT_EQ(t.size(), 2 * t.real().size()) << t.name();
}

TEST(DType, MappingFromCppTypes) {
  EXPECT_EQ(dtype_of<float>, f32);
  EXPECT_EQ(dtype_of<const double>, f64);
  EXPECT_EQ(dtype_of<std::complex<float>>, c64);
  EXPECT_EQ(dtype_of<const std::complex<double>>, c128);
  EXPECT_EQ(dtype_of<cuplan::half>, f16);
  EXPECT_EQ(dtype_of<cuplan::bfloat16>, bf16);
  EXPECT_EQ(dtype_of<cuplan::float8_e4m3>, f8_e4m3);
  EXPECT_EQ(dtype_of<std::int64_t>, i64);
  static_assert(dtype_of<std::int8_t> == i8);
}

TEST(DType, EqualityAndDefault) {
  EXPECT_EQ(DType{}, f32);
  EXPECT_FALSE(f32 == f64);
  EXPECT_EQ(DType(DTypeCode::c64), c64);
  EXPECT_EQ(c128.alignment(), 16u);
}

#if CUPLAN_HAS_CUDA
static_assert(std::is_same_v<half, __half> && std::is_same_v<bfloat16, __nv_bfloat16> &&
              std::is_same_v<half2, __half2> && std::is_same_v<float8_e4m3, __nv_fp8_e4m3> &&
              std::is_same_v<float8_e5m2, __nv_fp8_e5m2>);
#endif

std::uint16_t bits_of(half h) {
  return std::bit_cast<std::uint16_t>(h);
}
std::uint16_t bits_of(bfloat16 b) {
  return std::bit_cast<std::uint16_t>(b);
}

// The same expectations hold for CUDA's __half / __nv_bfloat16 host conversions (the CUDA build) and for cuplan's
// own types (the CPU-only build): round to nearest even, overflow to infinity, subnormals, NaN.
TEST(DType, HalfConvertsLikeIeeeBinary16) {
  EXPECT_EQ(bits_of(half(1.0f)), 0x3c00);
  EXPECT_EQ(bits_of(half(-2.5f)), 0xc100);
  EXPECT_EQ(bits_of(half(65504.0f)), 0x7bff);                          // largest finite
  EXPECT_EQ(bits_of(half(65519.0f)), 0x7bff);                          // below the halfway point to 65536
  EXPECT_EQ(bits_of(half(65520.0f)), 0x7c00);                          // rounds to infinity
  EXPECT_EQ(bits_of(half(1.0f + std::ldexp(1.0f, -11))), 0x3c00);      // tie: to even (down)
  EXPECT_EQ(bits_of(half(1.0f + 3 * std::ldexp(1.0f, -11))), 0x3c02);  // tie: to even (up)
  EXPECT_EQ(bits_of(half(std::ldexp(1.0f, -24))), 0x0001);             // smallest subnormal
  EXPECT_EQ(bits_of(half(std::ldexp(1.0f, -25))), 0x0000);             // tie with zero: to even
  EXPECT_EQ(bits_of(half(std::ldexp(1.0f, -14))), 0x0400);             // smallest normal
  EXPECT_EQ(bits_of(half(std::numeric_limits<float>::infinity())), 0x7c00);
  EXPECT_TRUE(std::isnan(static_cast<float>(half(std::numeric_limits<float>::quiet_NaN()))));
  for (const float value : {0.0f, 1.0f, -0.5f, 3.140625f, 65504.0f, std::ldexp(1.0f, -24), std::ldexp(3.0f, -20)})
    EXPECT_EQ(static_cast<float>(half(value)), value) << value << " is a half: converts back exactly";
}

TEST(DType, BFloat16ConvertsByRoundingToNearestEven) {
  EXPECT_EQ(bits_of(bfloat16(1.0f)), 0x3f80);
  EXPECT_EQ(bits_of(bfloat16(-3.0f)), 0xc040);
  EXPECT_EQ(bits_of(bfloat16(1.0f + std::ldexp(1.0f, -8))), 0x3f80);      // tie: to even (down)
  EXPECT_EQ(bits_of(bfloat16(1.0f + 3 * std::ldexp(1.0f, -8))), 0x3f82);  // tie: to even (up)
  EXPECT_EQ(bits_of(bfloat16(std::numeric_limits<float>::infinity())), 0x7f80);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  for (const float value : {0.0f, 1.0f, -0.5f, 3.140625f, std::ldexp(1.0f, -130)})
    EXPECT_EQ(static_cast<float>(bfloat16(value)), value) << value << " is a bfloat16: converts back exactly";
}

}  // namespace
}  // namespace cuplan
