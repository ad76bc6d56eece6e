// SPDX-License-Identifier: Apache-2.0
// The one check of a rank's local array that DistributedFFT, DistributedMatmul and Redistribute share, on the CPU:
// each mistake is refused with a message that names the object, the operand, everything expected, what was given
// and what differs; an empty array may lie anywhere.
#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "distributed/local_array.hpp"

namespace {

using cuplan::detail::dist::check_local_array;
using cuplan::detail::dist::LocalArraySpec;
using cuplan::detail::dist::shape_text;

// What a rank's output box of 4x6 c64 on GPU 1 must be; the device need not exist (no device call is made).
LocalArraySpec out_spec() {
  return {.dtype = cuplan::c64,
          .shape = {4, 6},
          .role = "rank 1's output box",
          .device = cuplan::Device::cuda(1),
          .writable = true};
}

// The message of check_local_array on `view`, or "" when it accepts it.
std::string refusal(const cuplan::TensorView& view, const LocalArraySpec& spec) {
  try {
    check_local_array(view, "Redistribute::execute", "out", spec);
    return "";
  } catch (const cuplan::InvalidArgument& e) {
    return e.what();
  }
}

TEST(LocalArray, ShapeTextWritesExtentsWithAnX) {
  EXPECT_EQ(shape_text({8, 8, 5}), "8x8x5");
  EXPECT_EQ(shape_text({7}), "7");
  EXPECT_EQ(shape_text(cuplan::Shape{}), "()");
}

TEST(LocalArray, HostMemoryIsRefusedNamingTheObjectTheOperandTheExpectationAndTheMemory) {
  std::vector<std::complex<float>> data(24);
  const std::string msg = refusal(cuplan::TensorView(data.data(), {4, 6}), out_spec());
  EXPECT_NE(msg.find("Redistribute::execute: out: expected a writable contiguous c64 array of shape 4x6 (rank 1's "
                     "output box) in device memory on cuda:1, got TensorView(c64, shape=[4, 6]"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("its memory is host_pageable on cpu"), std::string::npos) << msg;
}

TEST(LocalArray, EachDifferenceIsNamed) {
  std::vector<double> real(24);
  EXPECT_NE(refusal(cuplan::TensorView(real.data(), {4, 6}), out_spec()).find("its dtype is f64"), std::string::npos);
  std::vector<std::complex<float>> data(48);
  EXPECT_NE(refusal(cuplan::TensorView(data.data(), {6, 4}), out_spec()).find("its shape is 6x4"), std::string::npos);
  const cuplan::TensorView strided(data.data(), {4, 6}, {12, 1});
  EXPECT_NE(refusal(strided, out_spec()).find("it is not contiguous row-major"), std::string::npos);
  const std::string read_only = refusal(cuplan::TensorView(data.data(), {4, 6}).as_read_only(), out_spec());
  EXPECT_NE(read_only.find("it is read-only (pass a writable view or a copy)"), std::string::npos) << read_only;
  // Several differences are all listed, in one message.
  const std::string both = refusal(cuplan::TensorView(real.data(), {6, 4}), out_spec());
  EXPECT_NE(both.find("its dtype is f64; its shape is 6x4; its memory is"), std::string::npos) << both;
}

TEST(LocalArray, AReadOnlyOperandIsTakenWhenNothingWritesIt) {
  std::vector<std::complex<float>> data(24);
  LocalArraySpec operand = out_spec();
  operand.writable = false;
  operand.device = cuplan::Device::cpu();  // only to pass the memory check here: no GPU is needed
  const cuplan::TensorView view(data.data(), {4, 6});
  // Host memory is never device memory: the memory check still refuses it, naming only that.
  const std::string msg = refusal(view.as_read_only(), operand);
  EXPECT_EQ(msg.find("it is read-only"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("expected a writable"), std::string::npos) << msg;
  EXPECT_NE(msg.find("its memory is host_pageable on cpu"), std::string::npos) << msg;
}

TEST(LocalArray, AnEmptyArrayMayLieAnywhere) {
  LocalArraySpec empty = out_spec();
  empty.shape = {0, 6};
  EXPECT_EQ(refusal(cuplan::TensorView(static_cast<std::complex<float>*>(nullptr), {0, 6}), empty), "");
}

}  // namespace
