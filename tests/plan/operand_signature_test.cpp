// SPDX-License-Identifier: Apache-2.0
// OperandSignature: the one "operand matches the plan" rule behind plan keys, reset checks and `out` checks.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuplan/errors.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/plan_cache.hpp"

namespace cuplan::detail {
namespace {

std::string message_of(const OperandSignature& planned, const TensorView& view) {
  try {
    planned.require_match(view, "Op", "reset_operand", "x");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return {};
}

bool same_key(const TensorView& a, const TensorView& b) {
  PlanKey ka(PlanKind::fft), kb(PlanKind::fft);
  ka.add(OperandSignature::of(a));
  kb.add(OperandSignature::of(b));
  return ka == kb;
}

TEST(OperandSignature, StridesOfAxesOfLengthOneNeverMatter) {
  alignas(16) static float data[64];
  const TensorView planned(data, f32, {1, 8, 4}, Strides{32, 4, 1}, Device::cpu(), MemorySpace::host_pageable);
  const TensorView other(data, f32, {1, 8, 4}, Strides{999, 4, 1}, Device::cpu(), MemorySpace::host_pageable);
  const OperandSignature signature = OperandSignature::of(planned);
  EXPECT_TRUE(signature.matches(other));
  EXPECT_EQ(signature, OperandSignature::of(other));
  EXPECT_TRUE(same_key(planned, other)) << "the plan-cache key follows the same rule";
}

TEST(OperandSignature, PageableAndPinnedHostMemoryAreOneClass) {
  alignas(16) static float data[16];
  const TensorView pageable(data, f32, {16}, Strides{1}, Device::cpu(), MemorySpace::host_pageable);
  const TensorView pinned(data, f32, {16}, Strides{1}, Device::cpu(), MemorySpace::host_pinned);
  const TensorView device(data, f32, {16}, Strides{1}, Device::cuda(0), MemorySpace::device);
  EXPECT_TRUE(OperandSignature::of(pageable).matches(pinned));
  EXPECT_TRUE(same_key(pageable, pinned));
  EXPECT_FALSE(OperandSignature::of(pageable).matches(device));
  EXPECT_FALSE(same_key(pageable, device));
  const std::string m = message_of(OperandSignature::of(device), pageable);
  EXPECT_NE(m.find("Op.reset_operand: x memory: expected memory of cuda:0 (as planned), got host memory"),
            std::string::npos)
      << m;
}

TEST(OperandSignature, MessagesNameTheOperandWhatDiffersThePlannedAndTheGivenValue) {
  alignas(16) static double data[64];
  const TensorView planned(data, {8, 8});
  const OperandSignature signature = OperandSignature::of(planned);
  EXPECT_EQ(message_of(signature, planned), "");
  EXPECT_NE(
      message_of(signature, TensorView(data, f32, {8, 8}, Strides{8, 1}, Device::cpu(), MemorySpace::host_pageable))
          .find("x dtype: expected f64 (as planned), got f32"),
      std::string::npos);
  EXPECT_NE(message_of(signature, TensorView(data, {8, 4})).find("x shape: expected [8, 8] (as planned), got [8, 4]"),
            std::string::npos);
  EXPECT_NE(
      message_of(signature, TensorView(data, f64, {8, 8}, Strides{1, 8}, Device::cpu(), MemorySpace::host_pageable))
          .find("x strides: expected [8, 1] (as planned), got [1, 8]"),
      std::string::npos);
  // A pointer less aligned than the planned class is refused; a more aligned one is fine.
  const auto* shifted = reinterpret_cast<const double*>(reinterpret_cast<const char*>(data) + 8);
  const std::string m =
      message_of(signature, TensorView(shifted, f64, {8, 8}, Strides{8, 1}, Device::cpu(), MemorySpace::host_pageable));
  EXPECT_NE(m.find("x alignment: expected an address aligned to 16 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("8 bytes past"), std::string::npos) << m;
  OperandSignature loose = signature;
  loose.alignment = 8;
  EXPECT_TRUE(
      loose.matches(TensorView(shifted, f64, {8, 8}, Strides{8, 1}, Device::cpu(), MemorySpace::host_pageable)));
}

TEST(OperandSignature, StridesNoteFollowsOnlyAStridesMismatch) {
  alignas(16) static float data[64];
  const OperandSignature out =
      OperandSignature::result(f32, Shape{8, 8}, Strides{1, 8}, /*host=*/true, /*device=*/-1, /*alignment=*/4);
  try {
    out.require_match(TensorView(data, {8, 8}), "Matmul", "execute", "out", "D is column-major");
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("out strides: expected [1, 8] (as planned), got [8, 1]; D is column-major"),
              std::string::npos)
        << e.what();
  }
  try {
    out.require_match(TensorView(data, {8, 4}), "Matmul", nullptr, "out", "D is column-major");
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "Matmul: out shape: expected [8, 8] (as planned), got [8, 4]");
  }
}

}  // namespace
}  // namespace cuplan::detail
