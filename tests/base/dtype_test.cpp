// SPDX-License-Identifier: Apache-2.0
// Element types: sizes, names, real/complex pairs and the C++ type mapping.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>

#include "cuplan/dtype.hpp"

namespace cuplan {
namespace {

TEST(DType, SizesMatchTheCppTypes) {
  EXPECT_EQ(f16.size(), sizeof(__half));
  EXPECT_EQ(bf16.size(), sizeof(__nv_bfloat16));
  EXPECT_EQ(f32.size(), sizeof(float));
  EXPECT_EQ(f64.size(), sizeof(double));
  EXPECT_EQ(c32.size(), sizeof(__half2));
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
  EXPECT_EQ(dtype_of<__half>, f16);
  EXPECT_EQ(dtype_of<__nv_bfloat16>, bf16);
  EXPECT_EQ(dtype_of<__nv_fp8_e4m3>, f8_e4m3);
  EXPECT_EQ(dtype_of<std::int64_t>, i64);
  static_assert(dtype_of<std::int8_t> == i8);
}

TEST(DType, EqualityAndDefault) {
  EXPECT_EQ(DType{}, f32);
  EXPECT_FALSE(f32 == f64);
  EXPECT_EQ(DType(DTypeCode::c64), c64);
  EXPECT_EQ(c128.alignment(), 16u);
}

}  // namespace
}  // namespace cuplan
