// SPDX-License-Identifier: Apache-2.0
// Devices: identity and formatting (no GPU needed), the no-GPU behaviour, and device selection on a GPU.

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

#define CUPLAN_REQUIRE_NO_GPU()                                                                   \
  do {                                                                                            \
    if (::cuplan::cuda_available())                                                               \
      GTEST_SKIP() << "a CUDA device is present: this test covers machines without a usable GPU"; \
  } while (0)

int current_device_index() {
  int index = -1;
  EXPECT_EQ(cudaGetDevice(&index), cudaSuccess);
  return index;
}

TEST(Device, CpuIdentity) {
  constexpr Device cpu = Device::cpu();
  static_assert(cpu.is_cpu() && !cpu.is_cuda());
  static_assert(cpu.index() == -1);
  static_assert(Device() == Device::cpu());
  EXPECT_EQ(cpu.kind(), Device::Kind::cpu);
  EXPECT_EQ(cpu.to_string(), "cpu");
}

TEST(Device, CudaIdentity) {
  constexpr Device gpu = Device::cuda(3);
  static_assert(gpu.is_cuda() && !gpu.is_cpu());
  static_assert(gpu.index() == 3);
  static_assert(Device::cuda() == Device::cuda(0));
  static_assert(Device::cuda(1) != Device::cuda(2));
  static_assert(Device::cuda(0) != Device::cpu());
  EXPECT_EQ(gpu.to_string(), "cuda:3");
  EXPECT_EQ(Device::cuda(0).to_string(), "cuda:0");
}

TEST(Device, CpuOperationsNeedNoGpu) {
  EXPECT_NO_THROW(Device::cpu().use());
  EXPECT_NO_THROW(Device::cpu().synchronize());
  EXPECT_NO_THROW(Device::cpu().check_valid("operand"));
  EXPECT_NO_THROW(DeviceScope scope(Device::cpu()));
}

TEST(Device, AvailabilityIsStableAndConsistent) {
  const int count = cuda_device_count();
  EXPECT_GE(count, 0);
  EXPECT_EQ(cuda_available(), count > 0);
  EXPECT_EQ(cuda_device_count(), count);  // asked once, same answer
  // On a GPU, the query must leave no error behind for the next CUDA call to report. (Without a driver, every
  // runtime call reports the failed initialisation again; there is nothing to clear.)
  if (count > 0) {
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
}

TEST(Device, WithoutGpuCudaOperationsThrowNotSupported) {
  CUPLAN_REQUIRE_NO_GPU();
  EXPECT_EQ(cuda_device_count(), 0);
  try {
    (void)Device::current();
    FAIL() << "Device::current() did not throw without a GPU";
  } catch (const NotSupported& error) {
    EXPECT_NE(std::string(error.what()).find("no CUDA device"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("Device::current"), std::string::npos) << error.what();
  }
  EXPECT_THROW(Device::cuda(0).use(), NotSupported);
  EXPECT_THROW(Device::cuda(0).synchronize(), NotSupported);
  EXPECT_THROW(Device::cuda(0).check_valid("operand x"), NotSupported);
  EXPECT_THROW(DeviceScope scope(Device::cuda(0)), NotSupported);
}

TEST(Device, CheckValidNamesRangeAndValue) {
  CUPLAN_REQUIRE_GPU();
  const int count = cuda_device_count();
  EXPECT_NO_THROW(Device::cuda(count - 1).check_valid("operand x"));
  for (const int bad : {count, count + 4}) {
    try {
      Device::cuda(bad).check_valid("operand x");
      FAIL() << "device index " << bad << " was accepted";
    } catch (const InvalidArgument& error) {
      const std::string expected =
          "operand x: expected a CUDA device index in [0, " + std::to_string(count) + "), got " + std::to_string(bad);
      EXPECT_EQ(std::string(error.what()), expected);
    }
  }
}

// A negative index names no device on any machine: InvalidArgument, with or without a GPU (without one it used to be
// NotSupported "no CUDA device", which hid the bad index).
TEST(Device, NegativeIndexIsInvalidOnEveryMachine) {
  for (const int bad : {-1, -5}) {
    try {
      Device::cuda(bad).check_valid("operand x");
      FAIL() << "device index " << bad << " was accepted";
    } catch (const InvalidArgument& error) {
      EXPECT_EQ(std::string(error.what()),
                "operand x: expected a CUDA device index of 0 or more, got " + std::to_string(bad));
    }
  }
  // The same where a device is used: a Tensor, a Stream, an Event (without a GPU these said "no CUDA device").
  EXPECT_THROW((void)Tensor::empty({4}, f32, Device::cuda(-1)), InvalidArgument);
  EXPECT_THROW(Stream stream(Device::cuda(-2)), InvalidArgument);
  EXPECT_THROW(Event event(Device::cuda(-3), false), InvalidArgument);
}

TEST(Device, UseMakesDeviceCurrent) {
  CUPLAN_REQUIRE_GPU();
  const int last = cuda_device_count() - 1;
  Device::cuda(last).use();
  EXPECT_EQ(Device::current(), Device::cuda(last));
  EXPECT_EQ(current_device_index(), last);
  Device::cuda(0).use();
  EXPECT_EQ(Device::current(), Device::cuda(0));
  EXPECT_THROW(Device::cuda(last + 1).use(), InvalidArgument);
  EXPECT_EQ(Device::current(), Device::cuda(0));  // a rejected use() changes nothing
}

TEST(Device, SynchronizeSucceeds) {
  CUPLAN_REQUIRE_GPU();
  EXPECT_NO_THROW(Device::cuda(0).synchronize());
  EXPECT_EQ(Device::current(), Device::cuda(0));
}

TEST(Device, ScopeOnCurrentDeviceKeepsIt) {
  CUPLAN_REQUIRE_GPU();
  Device::cuda(0).use();
  {
    DeviceScope scope(Device::cuda(0));
    EXPECT_EQ(Device::current(), Device::cuda(0));
  }
  EXPECT_EQ(Device::current(), Device::cuda(0));
}

TEST(Device, ScopeWithInvalidDeviceThrowsAndChangesNothing) {
  CUPLAN_REQUIRE_GPU();
  Device::cuda(0).use();
  EXPECT_THROW(DeviceScope scope(Device::cuda(cuda_device_count())), InvalidArgument);
  EXPECT_EQ(Device::current(), Device::cuda(0));
}

TEST(Device, ScopeSwitchesAndRestoresEvenOnException) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "switching devices needs two GPUs; this machine has one";
  Device::cuda(0).use();
  {
    DeviceScope outer(Device::cuda(1));
    EXPECT_EQ(Device::current(), Device::cuda(1));
    {
      DeviceScope inner(Device::cuda(0));
      EXPECT_EQ(Device::current(), Device::cuda(0));
    }
    EXPECT_EQ(Device::current(), Device::cuda(1));
  }
  EXPECT_EQ(Device::current(), Device::cuda(0));
  try {
    DeviceScope scope(Device::cuda(1));
    throw std::runtime_error("leaves the scope early");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(Device::current(), Device::cuda(0));
}

}  // namespace
}  // namespace cuplan
