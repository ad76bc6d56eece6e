// SPDX-License-Identifier: Apache-2.0
// Tensor and TensorRef: host allocation, sharing semantics, wraps, and device allocation rules.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/access.hpp"
#include "runtime/storage.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

TEST(Tensor, HostAllocationIsAlignedRowMajorAndOwning) {
  for (DType dtype : {i8, f16, f32, c64, c128}) {
    Tensor t = Tensor::empty({3, 5, 7}, dtype);
    EXPECT_TRUE(t.owning());
    EXPECT_TRUE(t.defined());
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(t.shape(), (Dims{3, 5, 7}));
    EXPECT_EQ(t.strides(), (Dims{35, 7, 1}));
    EXPECT_EQ(t.numel(), 105);
    EXPECT_EQ(t.memory_space(), MemorySpace::host_pageable);
    EXPECT_EQ(t.device(), Device::cpu());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u) << dtype.name();
    ASSERT_NE(detail::Access::storage(t), nullptr);
    EXPECT_EQ(detail::Access::storage(t)->bytes(), 105 * dtype.size());
  }
}

TEST(Tensor, HostMemoryIsWritableOverItsWholeSize) {
  Tensor t = Tensor::empty({1000}, f64);
  auto* p = t.data<double>();
  for (int i = 0; i < 1000; ++i) p[i] = i * 0.5;
  double sum = 0;
  for (int i = 0; i < 1000; ++i) sum += p[i];
  EXPECT_DOUBLE_EQ(sum, 0.5 * 999 * 1000 / 2);
}

TEST(Tensor, DefaultConstructedIsNotDefined) {
  EXPECT_FALSE(Tensor().defined());
  EXPECT_TRUE(Tensor::empty({1}, f32).defined());
  EXPECT_TRUE(Tensor::empty({}, f32).defined());  // a scalar
  float value = 0;
  EXPECT_TRUE(Tensor::wrap(TensorView(&value, {1})).defined());
}

TEST(Tensor, EmptyShapeHasNoMemory) {
  Tensor t = Tensor::empty({4, 0}, f32);
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.view().span_bytes(), 0u);
}

TEST(Tensor, CopiesShareMemory) {
  Tensor a = Tensor::empty({16}, f32);
  std::weak_ptr<detail::Storage> watch = detail::Access::storage(a);
  {
    Tensor b = a;
    EXPECT_EQ(b.data(), a.data());
    EXPECT_EQ(detail::Access::storage(a).use_count(), 2);
    b.data<float>()[3] = 42.0f;
    EXPECT_EQ(a.data<float>()[3], 42.0f);
  }
  EXPECT_EQ(detail::Access::storage(a).use_count(), 1);
  TensorRef ref(a);
  Tensor c = ref.as_tensor();
  EXPECT_EQ(detail::Access::storage(c), detail::Access::storage(a));
  EXPECT_TRUE(c.owning());
  a = Tensor();
  c = Tensor();
  EXPECT_FALSE(watch.expired()) << "the TensorRef still holds the memory";
  ref = TensorRef();
  EXPECT_TRUE(watch.expired());
}

TEST(Tensor, WrapAliasesWithoutOwning) {
  std::vector<float> host(12);
  TensorView view(host.data(), {3, 4});
  Tensor w = Tensor::wrap(view);
  EXPECT_FALSE(w.owning());
  EXPECT_EQ(w.data(), host.data());
  EXPECT_EQ(w.shape(), (Dims{3, 4}));
  w.record_stream(StreamRef{});  // nothing to record for memory owned elsewhere
  TensorRef ref(view);
  EXPECT_EQ(detail::Access::storage(ref), nullptr);
  ref.record_stream(StreamRef{});
  Tensor as = ref.as_tensor();
  EXPECT_FALSE(as.owning());
  EXPECT_EQ(as.data(), host.data());
}

TEST(Tensor, EmptyLikeTakesShapeAndDtype) {
  std::vector<std::complex<double>> host(6);
  Tensor t = Tensor::empty_like(TensorView(host.data(), {2, 3}), Device::cpu());
  EXPECT_EQ(t.dtype(), c128);
  EXPECT_EQ(t.shape(), (Dims{2, 3}));
}

TEST(Tensor, SizeOverflowIsInvalid) {
  const std::int64_t big = std::int64_t{1} << 31;
  EXPECT_THROW(Tensor::empty({big, big, 4}, c128), InvalidArgument);
  EXPECT_THROW(Tensor::empty({4, -1}, f32), InvalidArgument);
}

TEST(Tensor, HostAllocationTooLargeIsOutOfMemoryNamingTheBytes) {
  // 2^50 c64 elements: 8 PiB, a valid size that no host can serve.
  const std::int64_t huge = std::int64_t{1} << 50;
  try {
    Tensor::empty({huge}, c64);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("9007199254740992 bytes of host memory"), std::string::npos) << e.what();
  }
  // 2^62 bytes, the largest order of size that still fits the byte count: the same typed error, and the next
  // allocation works.
  EXPECT_THROW(Tensor::empty({std::int64_t{1} << 40, std::int64_t{1} << 20}, f32), OutOfMemory);
  EXPECT_EQ(Tensor::empty({4}, f32).numel(), 4);
}

TEST(Tensor, DeviceMemoryWithoutGpuIsNotSupported) {
  if (cuda_available()) GTEST_SKIP() << "this machine has a GPU; the no-GPU error path cannot be shown here";
  try {
    Tensor::empty({4}, f32, Device::cuda(0));
    FAIL() << "device tensor created without a GPU";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tensor::empty({4}, f32, Device::cpu(), std::nullopt, HostMemory::pinned), NotSupported);
}

TEST(Tensor, DeviceAllocationIsStreamOrderedOnTheGivenStream) {
  CUPLAN_REQUIRE_GPU();
  Stream s(Device::cuda(0));
  Tensor t = Tensor::empty({256, 3}, c64, Device::cuda(0), s);
  EXPECT_TRUE(t.owning());
  EXPECT_EQ(t.memory_space(), MemorySpace::device);
  EXPECT_EQ(t.device(), Device::cuda(0));
  EXPECT_EQ(t.allocation_stream(), StreamRef(s));
  EXPECT_EQ(pointer_info(t.data()).space, MemorySpace::device);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 256, 0u);
  ASSERT_EQ(cudaMemsetAsync(t.data(), 0, t.view().span_bytes(), s.native()), cudaSuccess);
  s.synchronize();
}

TEST(Tensor, DeviceAllocationOnCurrentStreamWhenOmitted) {
  CUPLAN_REQUIRE_GPU();
  Stream s(Device::cuda(0));
  StreamScope scope(s);
  Tensor t = Tensor::empty({8}, f32, Device::cuda(0));
  EXPECT_EQ(t.allocation_stream(), StreamRef(s));
}

TEST(Tensor, StreamOfAnotherDeviceIsInvalid) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices, found " << cuda_device_count();
  Stream s1(Device::cuda(1));
  try {
    Tensor::empty({8}, f32, Device::cuda(0), s1);
    FAIL() << "stream of cuda:1 accepted for a tensor on cuda:0";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
}

TEST(Tensor, PinnedHostAllocation) {
  CUPLAN_REQUIRE_GPU();
  Tensor t = Tensor::empty({64}, f64, Device::cpu(), std::nullopt, HostMemory::pinned);
  EXPECT_EQ(t.memory_space(), MemorySpace::host_pinned);
  EXPECT_EQ(pointer_info(t.data()).space, MemorySpace::host_pinned);
  EXPECT_TRUE(t.view().on_host());
}

TEST(Tensor, DeviceIndexOutOfRangeIsInvalid) {
  CUPLAN_REQUIRE_GPU();
  EXPECT_THROW(Tensor::empty({8}, f32, Device::cuda(cuda_device_count())), InvalidArgument);
}

}  // namespace
}  // namespace cuplan

namespace cuplan {
namespace {

TEST(TensorStrided, ColumnMajorHostTensorCoversItsSpan) {
  auto t = Tensor::empty_strided({3, 4}, column_major_strides({3, 4}), f64);
  EXPECT_EQ(t.strides(), (Strides{1, 3}));
  EXPECT_FALSE(t.view().is_contiguous());
  double* data = t.data<double>();
  for (int i = 0; i < 12; ++i) data[i] = i;  // the whole span is writable
  EXPECT_EQ(data[1 * 1 + 2 * 3], 7.0);
}

TEST(TensorStrided, PaddedRowsAllocateThePadding) {
  auto t = Tensor::empty_strided({2, 3}, {8, 1}, f32);
  EXPECT_EQ(t.view().span_bytes(), (8 + 3) * sizeof(float));
}

TEST(TensorStrided, OverlappingOrNegativeStridesAreRejected) {
  try {
    Tensor::empty_strided({4, 4}, {1, 1}, f32);
    FAIL() << "overlapping strides accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no two elements share memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tensor::empty_strided({4, 4}, {-4, 1}, f32), InvalidArgument);
  EXPECT_THROW(Tensor::empty_strided({4, 4}, {1}, f32), InvalidArgument);
}

}  // namespace
}  // namespace cuplan
