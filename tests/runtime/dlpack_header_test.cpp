// SPDX-License-Identifier: Apache-2.0
// DLPack with a DLPack header of the caller's own next to cuplan's declarations (cuplan/dlpack.hpp): whatever its
// version (Debian 12 ships 0.6, without the versioned tensor), TensorView and Tensor::from_dlpack take the header's
// types directly, dlpack::cast converts the pointers both ways, and the two declare the same layout field by field.
// Without any <dlpack/dlpack.h> on the machine the test reports skipped, saying so; cuplan itself needs none.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuplan/errors.hpp"
#include "cuplan/tensor.hpp"

#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#define CUPLAN_TEST_DLPACK_HEADER 1
#else
#define CUPLAN_TEST_DLPACK_HEADER 0
#endif

namespace {

#if CUPLAN_TEST_DLPACK_HEADER
namespace dl = cuplan::dlpack;

// Field by field: the system header's structs and cuplan's are one C layout.
static_assert(sizeof(::DLTensor) == sizeof(dl::DLTensor));
static_assert(offsetof(::DLTensor, data) == offsetof(dl::DLTensor, data));
static_assert(offsetof(::DLTensor, device) == offsetof(dl::DLTensor, device));
static_assert(offsetof(::DLTensor, ndim) == offsetof(dl::DLTensor, ndim));
static_assert(offsetof(::DLTensor, dtype) == offsetof(dl::DLTensor, dtype));
static_assert(offsetof(::DLTensor, shape) == offsetof(dl::DLTensor, shape));
static_assert(offsetof(::DLTensor, strides) == offsetof(dl::DLTensor, strides));
static_assert(offsetof(::DLTensor, byte_offset) == offsetof(dl::DLTensor, byte_offset));
static_assert(sizeof(::DLManagedTensor) == sizeof(dl::DLManagedTensor));
static_assert(offsetof(::DLManagedTensor, manager_ctx) == offsetof(dl::DLManagedTensor, manager_ctx));
static_assert(offsetof(::DLManagedTensor, deleter) == offsetof(dl::DLManagedTensor, deleter));
static_assert(static_cast<int>(::kDLCPU) == dl::kDLCPU && static_cast<int>(::kDLCUDA) == dl::kDLCUDA &&
              static_cast<int>(::kDLCUDAHost) == dl::kDLCUDAHost &&
              static_cast<int>(::kDLCUDAManaged) == dl::kDLCUDAManaged);
static_assert(static_cast<int>(::kDLInt) == dl::kDLInt && static_cast<int>(::kDLFloat) == dl::kDLFloat &&
              static_cast<int>(::kDLBfloat) == dl::kDLBfloat && static_cast<int>(::kDLComplex) == dl::kDLComplex);
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
static_assert(sizeof(::DLManagedTensorVersioned) == sizeof(dl::DLManagedTensorVersioned));
static_assert(offsetof(::DLManagedTensorVersioned, flags) == offsetof(dl::DLManagedTensorVersioned, flags));
static_assert(offsetof(::DLManagedTensorVersioned, dl_tensor) == offsetof(dl::DLManagedTensorVersioned, dl_tensor));
static_assert(DLPACK_FLAG_BITMASK_READ_ONLY == dl::flag_read_only);
#endif
#endif

TEST(DLPackHeader, TheCallersOwnTypesAreTakenAsTheyAre) {
#if CUPLAN_TEST_DLPACK_HEADER
  std::vector<float> values = {1.0F, 2.0F, 3.0F, 4.0F, 5.0F, 6.0F};
  std::int64_t shape[2] = {2, 3};
  std::int64_t strides[2] = {1, 2};  // column-major
  ::DLTensor tensor{};
  tensor.data = values.data();
  tensor.device.device_type = ::kDLCPU;
  tensor.ndim = 2;
  tensor.dtype.code = ::kDLFloat;
  tensor.dtype.bits = 32;
  tensor.dtype.lanes = 1;
  tensor.shape = shape;
  tensor.strides = strides;
  const cuplan::TensorView view(tensor);
  EXPECT_EQ(view.dtype(), cuplan::f32);
  EXPECT_EQ(view.shape(), cuplan::Shape({2, 3}));
  EXPECT_EQ(view.strides(), cuplan::Strides({1, 2}));
  EXPECT_EQ(view.data(), values.data());
#else
  GTEST_SKIP() << "no <dlpack/dlpack.h> on this machine (optional: cuplan declares the DLPack ABI itself; install "
                  "libdlpack-dev to run this check against a system header)";
#endif
}

TEST(DLPackHeader, ManagedTensorsCrossBetweenTheTwoDeclarations) {
#if CUPLAN_TEST_DLPACK_HEADER
  cuplan::Tensor t = cuplan::Tensor::empty({5}, cuplan::i32);
  for (int i = 0; i < 5; ++i) t.data<std::int32_t>()[i] = 3 * i;
  // Exported by cuplan, seen through the system header's struct, imported back from it.
  ::DLManagedTensor* managed = dl::cast<::DLManagedTensor>(t.to_dlpack());
  EXPECT_EQ(managed->dl_tensor.ndim, 1);
  EXPECT_EQ(managed->dl_tensor.shape[0], 5);
  EXPECT_EQ(managed->dl_tensor.dtype.code, ::kDLInt);
  const void* data = t.data();
  t = cuplan::Tensor();
  cuplan::Tensor back = cuplan::Tensor::from_dlpack(managed);
  EXPECT_EQ(back.data(), data);
  EXPECT_EQ(back.data<std::int32_t>()[4], 12);
  EXPECT_THROW((void)cuplan::Tensor::from_dlpack(static_cast<::DLManagedTensor*>(nullptr)), cuplan::InvalidArgument);
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
  ::DLManagedTensorVersioned* versioned =
      dl::cast<::DLManagedTensorVersioned>(back.as_read_only().to_dlpack_versioned());
  EXPECT_EQ(versioned->version.major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
  EXPECT_EQ(versioned->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  EXPECT_TRUE(cuplan::Tensor::from_dlpack(versioned).read_only());
#endif
#else
  GTEST_SKIP() << "no <dlpack/dlpack.h> on this machine (optional: cuplan declares the DLPack ABI itself; install "
                  "libdlpack-dev to run this check against a system header)";
#endif
}

}  // namespace
