// SPDX-License-Identifier: Apache-2.0
// NVTX range names: an object's label is formatted once per phase and reused; ranges nest and never throw.

#include <gtest/gtest.h>

#include <cstdint>
#include <new>
#include <string>

#include "base/nvtx.hpp"

namespace cuplan::detail {
namespace {

TEST(Nvtx, RangeNameAppendsTheLabel) {
  EXPECT_EQ(nvtx_range_name("cuplan::Matmul::execute", "Matmul 4 x 4 x 4 batch 1 f32"),
            "cuplan::Matmul::execute (Matmul 4 x 4 x 4 batch 1 f32)");
  EXPECT_EQ(nvtx_range_name("cuplan::copy host to device", ""), "cuplan::copy host to device");
}

TEST(Nvtx, NamesAreFormattedOncePerPhaseAndReused) {
  NvtxNames<2> names;
  int labels = 0;
  auto label = [&labels] {
    ++labels;
    return std::string("FFT c2c c64 [8] axes [0]");
  };
  const char* first = names.get(0, "cuplan::FFT::execute", label);
  EXPECT_STREQ(first, "cuplan::FFT::execute (FFT c2c c64 [8] axes [0])");
  for (int call = 0; call < 100; ++call) EXPECT_EQ(names.get(0, "cuplan::FFT::execute", label), first);
  EXPECT_EQ(labels, 1) << "a repeated call must not format the name again";
  EXPECT_STREQ(names.get(1, "cuplan::FFT::plan", label), "cuplan::FFT::plan (FFT c2c c64 [8] axes [0])");
  EXPECT_EQ(labels, 2);
}

TEST(Nvtx, LabelThatThrowsFallsBackToThePlainName) {
  NvtxNames<1> names;
  const char* name = names.get(0, "cuplan::Matmul::free", []() -> std::string { throw std::bad_alloc(); });
  EXPECT_STREQ(name, "cuplan::Matmul::free");
}

TEST(Nvtx, RangesNestWithAndWithoutPayload) {
  NvtxRange outer("cuplan::staging::run");
  for (std::int64_t chunk = 0; chunk < 3; ++chunk) {
    NvtxRange inner("cuplan::staging::upload", chunk);
  }
  SUCCEED();
}

}  // namespace
}  // namespace cuplan::detail
