// SPDX-License-Identifier: Apache-2.0
// Memory-resource API checks that need no GPU: argument validation, and NotSupported without a CUDA device.

#include <gtest/gtest.h>

#include <string>

#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/memory.hpp"

namespace cuplan {
namespace {

TEST(Memory, AdaptersRejectMissingParts) {
  EXPECT_THROW(PoolResource(nullptr), InvalidArgument);
  EXPECT_THROW(CallbackResource({}, [](void*, std::size_t, cudaStream_t) {}), InvalidArgument);
  EXPECT_THROW(CallbackResource([](std::size_t, cudaStream_t) -> void* { return nullptr; }, {}), InvalidArgument);
}

TEST(Memory, CallbackResourceForwardsToTheCallables) {
  int allocated = 0, freed = 0;
  static char arena[64];
  CallbackResource r(
      [&](std::size_t bytes, cudaStream_t) -> void* {
        allocated += static_cast<int>(bytes);
        return arena;
      },
      [&](void* p, std::size_t bytes, cudaStream_t) {
        EXPECT_EQ(p, arena);
        freed += static_cast<int>(bytes);
      });
  void* p = r.allocate(48, nullptr);
  r.deallocate(p, 48, nullptr);
  EXPECT_EQ(allocated, 48);
  EXPECT_EQ(freed, 48);
}

TEST(Memory, TheCpuIsNotADeviceWithAResource) {
  try {
    memory::set_resource(Device::cpu(), nullptr);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA device"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)memory::stats(Device::cpu()), InvalidArgument);
  EXPECT_THROW((void)memory::get_resource(Device::cuda(-1)), InvalidArgument);
}

TEST(Memory, WithoutAGpuResourcesAreNotSupportedAndCountersAreZero) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this test covers the CPU-only case";
  EXPECT_THROW(memory::set_resource(Device::cuda(0), nullptr), NotSupported);
  EXPECT_THROW((void)memory::get_resource(Device::cuda(0)), NotSupported);
  EXPECT_THROW(memory::set_release_threshold(Device::cuda(0), 0), NotSupported);
  EXPECT_NO_THROW(memory::trim());
  const memory::Stats stats = memory::stats(Device::cuda(0));
  EXPECT_EQ(stats.bytes_in_use, 0u);
  EXPECT_EQ(stats.allocations, 0u);
}

}  // namespace
}  // namespace cuplan
