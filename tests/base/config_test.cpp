// SPDX-License-Identifier: Apache-2.0
// cuplan/config.hpp as generated for this build: the version of the project, the components that were built, the
// features on, and the inline ABI namespace that holds the public API.

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "cuplan/config.hpp"
#include "cuplan/cuplan.hpp"

namespace {

TEST(Config, VersionIsTheProjectsVersion) {
  EXPECT_STREQ(CUPLAN_VERSION_STRING, CUPLAN_TEST_PROJECT_VERSION);
  const std::string joined = std::to_string(CUPLAN_VERSION_MAJOR) + "." + std::to_string(CUPLAN_VERSION_MINOR) + "." +
                             std::to_string(CUPLAN_VERSION_PATCH);
  EXPECT_EQ(joined, CUPLAN_VERSION_STRING);
  EXPECT_EQ(CUPLAN_VERSION, CUPLAN_VERSION_MAJOR * 10000 + CUPLAN_VERSION_MINOR * 100 + CUPLAN_VERSION_PATCH);
}

TEST(Config, ComponentsAreTheOnesBuilt) {
  EXPECT_EQ(CUPLAN_HAS_CUDA, CUPLAN_TEST_CUDA_ENABLED) << "CUPLAN_ENABLE_CUDA was " << CUPLAN_TEST_CUDA_ENABLED;
#if !CUPLAN_HAS_CUDA
  EXPECT_EQ(CUPLAN_HAS_DISTRIBUTED, 0) << "the distributed component needs CUDA";
  EXPECT_FALSE(cuplan::cuda_available()) << "a CPU-only build never finds a device";
  EXPECT_EQ(cuplan::cuda_device_count(), 0);
#endif
  EXPECT_EQ(CUPLAN_HAS_DISTRIBUTED, CUPLAN_TEST_DISTRIBUTED_BUILT)
      << "the distributed component was " << (CUPLAN_TEST_DISTRIBUTED_BUILT ? "" : "not ") << "built";
}

#if !CUPLAN_HAS_CUDA
// The CPU-only build keeps the calls that need a GPU and refuses them with NotSupported naming the build, where the
// CUDA build refuses them on a machine without a GPU.
TEST(Config, CpuOnlyBuildRefusesDeviceWorkNamingTheBuild) {
  auto expect_refused = [](auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": no exception";
    } catch (const cuplan::NotSupported& error) {
      EXPECT_NE(std::string(error.what()).find("built without CUDA (CUPLAN_ENABLE_CUDA=OFF)"), std::string::npos)
          << what << ": " << error.what();
    }
  };
  expect_refused([] { (void)cuplan::Stream::external(nullptr); }, "Stream::external");
  expect_refused([] { cuplan::Device::cuda(0).use(); }, "Device::use");
  std::vector<std::complex<float>> x(8, {1.0f, 0.0f});
  expect_refused([&] { cuplan::FFT f(cuplan::TensorView(x.data(), {8}), {.execution = cuplan::Execution::cuda()}); },
                 "FFT on Execution::cuda");
}
#endif

TEST(Config, DLPackVersionedAbiIsAlwaysOn) {
  EXPECT_EQ(CUPLAN_HAS_DLPACK, 1);
  EXPECT_EQ(CUPLAN_HAS_DLPACK_VERSIONED, 1);
  EXPECT_EQ(CUPLAN_HAS_DLPACK_FLOAT8, 1);
  EXPECT_EQ(cuplan::dlpack::version.major, static_cast<unsigned>(CUPLAN_DLPACK_MAJOR_VERSION));
  EXPECT_EQ(cuplan::dlpack::version.minor, static_cast<unsigned>(CUPLAN_DLPACK_MINOR_VERSION));
}

#define CUPLAN_TEST_STRINGIFY2(x) #x
#define CUPLAN_TEST_STRINGIFY(x) CUPLAN_TEST_STRINGIFY2(x)

TEST(Config, PublicApiLivesInTheInlineAbiNamespace) {
  static_assert(std::is_same_v<cuplan::Tensor, cuplan::CUPLAN_ABI_NAMESPACE::Tensor>);
  static_assert(std::is_same_v<cuplan::FFT, cuplan::CUPLAN_ABI_NAMESPACE::FFT>);
  static_assert(std::is_same_v<cuplan::dlpack::DLTensor, cuplan::CUPLAN_ABI_NAMESPACE::dlpack::DLTensor>);
  // v<major>_<minor> while the major version is 0, v<major> after.
  const std::string expected = CUPLAN_VERSION_MAJOR == 0 ? "v0_" + std::to_string(CUPLAN_VERSION_MINOR)
                                                         : "v" + std::to_string(CUPLAN_VERSION_MAJOR);
  EXPECT_EQ(std::string(CUPLAN_TEST_STRINGIFY(CUPLAN_ABI_NAMESPACE)), expected);
}

}  // namespace
