// SPDX-License-Identifier: Apache-2.0
// cuplan::copy and Tensor::to: every layout class against a reference index loop, on random bytes with a
// poisoned destination. Host <-> host runs everywhere; paths through a GPU need one.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

constexpr std::uint8_t poison = 0xFF;  // random bytes are drawn below it, so an unwritten byte is recognisable

struct Case {
  const char* name;
  Shape shape;
  Strides src;
  Strides dst;
};

// Layout classes: dense, transposed, strided with gaps, broadcast source, negative strides, pitched rows,
// scalar, and a rank-8 permutation.
std::vector<Case> cases() {
  return {
      {"dense", {4, 5, 6}, {30, 6, 1}, {30, 6, 1}},
      {"transposed", {5, 7}, {1, 5}, {7, 1}},
      {"strided", {6, 9}, {18, 2}, {1, 7}},
      {"broadcast_source", {4, 6}, {0, 1}, {6, 1}},
      {"negative_strides", {3, 4, 5}, {-20, 5, -1}, {1, 3, 12}},
      {"pitched_rows", {5, 7}, {10, 1}, {8, 1}},
      {"column_major_both", {5, 7}, {1, 5}, {1, 5}},
      {"scalar", {}, {}, {}},
      {"rank8", {2, 1, 2, 3, 1, 2, 2, 2}, {96, 1, 48, 16, 1, 8, 4, 1}, {1, 7, 2, 4, 9, 12, 24, 48}},
  };
}

// A byte buffer holding one layout: `origin` is the element offset of the view's first element.
struct Buffer {
  std::int64_t origin = 0;
  std::int64_t extent = 1;  // elements
};
Buffer buffer_for(const Shape& shape, const Strides& strides) {
  Buffer b;
  const detail::OffsetRange r = detail::offset_range(shape, strides, "test");
  b.origin = -r.lowest;
  b.extent = r.highest - r.lowest + 1;
  return b;
}

template <class F>
void for_each_index(const Shape& shape, F f) {
  if (checked_numel(shape) == 0) return;
  std::int64_t index[Dims::max_rank] = {};
  for (;;) {
    f(index);
    int axis = shape.size() - 1;
    for (; axis >= 0; --axis) {
      if (++index[axis] < shape[axis]) break;
      index[axis] = 0;
    }
    if (axis < 0) return;
  }
}

std::int64_t offset(const std::int64_t* index, const Strides& strides) {
  std::int64_t o = 0;
  for (int axis = 0; axis < strides.size(); ++axis) o += index[axis] * strides[axis];
  return o;
}

std::vector<std::uint8_t> random_bytes(std::size_t n) {
  std::uniform_int_distribution<int> byte(0, poison - 1);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(byte(testing::rng()));
  return v;
}

// Every element of dst equals its src element; every byte of the dst buffer outside the elements is untouched.
void expect_copied(const Case& c, DType dtype, const std::uint8_t* src_base, const Buffer& src_buf,
                   const std::uint8_t* dst_base, const Buffer& dst_buf) {
  const auto es = static_cast<std::int64_t>(dtype.size());
  std::vector<bool> written(static_cast<std::size_t>(dst_buf.extent * es), false);
  int mismatches = 0;
  for_each_index(c.shape, [&](const std::int64_t* index) {
    const std::int64_t so = (src_buf.origin + offset(index, c.src)) * es;
    const std::int64_t d = (dst_buf.origin + offset(index, c.dst)) * es;
    if (std::memcmp(src_base + so, dst_base + d, static_cast<std::size_t>(es)) != 0) ++mismatches;
    for (std::int64_t k = 0; k < es; ++k) written[static_cast<std::size_t>(d + k)] = true;
  });
  EXPECT_EQ(mismatches, 0) << c.name << " " << dtype.name();
  int clobbered = 0;
  for (std::size_t i = 0; i < written.size(); ++i)
    if (!written[i] && dst_base[i] != poison) ++clobbered;
  EXPECT_EQ(clobbered, 0) << c.name << " " << dtype.name() << ": bytes outside the destination elements changed";
}

TEST(Copy, HostToHostAllLayoutsAndElementSizes) {
  for (const Case& c : cases()) {
    for (DType dtype : {i8, f16, f32, c64, c128}) {
      const auto es = dtype.size();
      const Buffer sb = buffer_for(c.shape, c.src), db = buffer_for(c.shape, c.dst);
      std::vector<std::uint8_t> src = random_bytes(static_cast<std::size_t>(sb.extent) * es);
      std::vector<std::uint8_t> dst(static_cast<std::size_t>(db.extent) * es, poison);
      copy(TensorView(src.data() + sb.origin * es, dtype, c.shape, c.src),
           TensorView(dst.data() + db.origin * es, dtype, c.shape, c.dst));
      expect_copied(c, dtype, src.data(), sb, dst.data(), db);
    }
  }
}

TEST(Copy, HostToHostIntoOwnedTensor) {
  std::vector<std::uint8_t> src = random_bytes(35 * sizeof(double));
  Tensor dst = Tensor::empty({5, 7}, f64);
  std::memset(dst.data(), poison, 35 * sizeof(double));
  const Case c{"transposed_into_tensor", {5, 7}, {1, 5}, {7, 1}};
  copy(TensorView(src.data(), f64, c.shape, c.src), dst);
  expect_copied(c, f64, src.data(), buffer_for(c.shape, c.src), static_cast<std::uint8_t*>(dst.data()),
                buffer_for(c.shape, c.dst));
}

TEST(Copy, MismatchedOperandsAreInvalid) {
  float a[12], b[12];
  double d[12];
  using testing::expect_throw_naming;
  ASSERT_NO_FATAL_FAILURE(expect_throw_naming<InvalidArgument>(
      [&] {
        copy(TensorView(a, {3, 4}), TensorView(d, {3, 4}));
      },
      {"dst", "f64", "expected f32"}));
  ASSERT_NO_FATAL_FAILURE(expect_throw_naming<InvalidArgument>(
      [&] {
        copy(TensorView(a, {3, 4}), TensorView(b, {4, 3}));
      },
      {"[4, 3]", "expected [3, 4]"}));
  expect_throw_naming<InvalidArgument>(
      [&] {
        copy(TensorView(a, {3, 4}), TensorView(b, {3, 4}, Strides{0, 1}));
      },
      {"dst overlaps itself", "[0, 1]"});
}

TEST(Copy, EmptyCopyTouchesNothing) {
  float a[1] = {1.0f}, b[1] = {2.0f};
  copy(TensorView(a, {0, 4}), TensorView(b, {0, 4}));
  EXPECT_EQ(b[0], 2.0f);
}

// Host (pageable or pinned) -> device (layout dst) -> device (layout src, or row-major when src aliases) -> host
// (layout dst), checked end to end against the first host buffer.
void round_trip_through_device(const Case& c, DType dtype, HostMemory host_memory) {
  SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype.name()) +
               (host_memory == HostMemory::pinned ? " pinned" : " pageable"));
  const auto es = static_cast<std::int64_t>(dtype.size());
  const Strides middle = detail::is_non_overlapping(c.shape, c.src) ? c.src : row_major_strides(c.shape);
  const Buffer sb = buffer_for(c.shape, c.src), d1 = buffer_for(c.shape, c.dst), d2 = buffer_for(c.shape, middle),
               hb = buffer_for(c.shape, c.dst);
  Stream stream(Device::cuda(0));

  Tensor host_src = Tensor::empty({sb.extent * es}, i8, Device::cpu(), std::nullopt, host_memory);
  Tensor host_dst = Tensor::empty({hb.extent * es}, i8, Device::cpu(), std::nullopt, host_memory);
  const std::vector<std::uint8_t> random = random_bytes(static_cast<std::size_t>(sb.extent * es));
  std::memcpy(host_src.data(), random.data(), random.size());
  std::memset(host_dst.data(), poison, static_cast<std::size_t>(hb.extent * es));
  Tensor dev1 = Tensor::empty({d1.extent * es}, i8, Device::cuda(0), stream);
  Tensor dev2 = Tensor::empty({d2.extent * es}, i8, Device::cuda(0), stream);
  ASSERT_EQ(cudaMemsetAsync(dev1.data(), poison, static_cast<std::size_t>(d1.extent * es), stream.native()),
            cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(dev2.data(), poison, static_cast<std::size_t>(d2.extent * es), stream.native()),
            cudaSuccess);

  auto* hs = static_cast<std::uint8_t*>(host_src.data());
  auto* hd = static_cast<std::uint8_t*>(host_dst.data());
  auto* p1 = static_cast<std::uint8_t*>(dev1.data());
  auto* p2 = static_cast<std::uint8_t*>(dev2.data());
  const TensorView v1(p1 + d1.origin * es, dtype, c.shape, c.dst);
  const TensorView v2(p2 + d2.origin * es, dtype, c.shape, middle);
  EXPECT_EQ(v1.memory_space(), MemorySpace::device);

  copy(TensorView(hs + sb.origin * es, dtype, c.shape, c.src), v1, stream);
  copy(v1, v2, stream);
  copy(v2, TensorView(hd + hb.origin * es, dtype, c.shape, c.dst), stream);  // blocking: usable at once
  expect_copied(c, dtype, hs, sb, hd, hb);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CopyGpu, RoundTripAllLayoutsPageable) {
  CUPLAN_REQUIRE_GPU();
  for (const Case& c : cases())
    for (DType dtype : {i8, f16, f32, c64, c128}) round_trip_through_device(c, dtype, HostMemory::pageable);
}

TEST(CopyGpu, RoundTripAllLayoutsPinned) {
  CUPLAN_REQUIRE_GPU();
  for (const Case& c : cases())
    for (DType dtype : {f32, c128}) round_trip_through_device(c, dtype, HostMemory::pinned);
}

TEST(CopyGpu, MisalignedComplexViewsUseNarrowerWords) {
  CUPLAN_REQUIRE_GPU();
  // c64 elements starting 4 bytes into a buffer: the kernel must not issue 8-byte accesses.
  const Case c{"misaligned_transpose", {9, 13}, {1, 9}, {13, 1}};
  const auto es = static_cast<std::int64_t>(c64.size());
  Stream stream(Device::cuda(0));
  const std::vector<std::uint8_t> src = random_bytes(static_cast<std::size_t>(9 * 13 * es + 4));
  Tensor dev_a = Tensor::empty({9 * 13 * es + 4}, i8, Device::cuda(0), stream);
  Tensor dev_b = Tensor::empty({9 * 13 * es + 4}, i8, Device::cuda(0), stream);
  auto* a = static_cast<std::uint8_t*>(dev_a.data()) + 4;
  auto* b = static_cast<std::uint8_t*>(dev_b.data()) + 4;
  copy(TensorView(src.data() + 4, c64, c.shape, c.src), TensorView(a, c64, c.shape, c.src), stream);
  copy(TensorView(a, c64, c.shape, c.src), TensorView(b, c64, c.shape, c.dst), stream);  // kernel transpose
  std::vector<std::uint8_t> out(src.size(), poison);
  copy(TensorView(b, c64, c.shape, c.dst), TensorView(out.data() + 4, c64, c.shape, c.dst), stream);
  expect_copied(c, c64, src.data() + 4, Buffer{0, 9 * 13}, out.data() + 4, Buffer{0, 9 * 13});
}

TEST(CopyGpu, TensorToDeviceAndBack) {
  CUPLAN_REQUIRE_GPU();
  Stream stream(Device::cuda(0));
  Tensor host = Tensor::empty({33, 17}, c128);
  const auto values = testing::random_vector<std::complex<double>>(33 * 17);
  std::memcpy(host.data(), values.data(), values.size() * sizeof(values[0]));
  Tensor device = host.to(Device::cuda(0), stream);
  EXPECT_EQ(device.memory_space(), MemorySpace::device);
  EXPECT_EQ(device.shape(), host.shape());
  Tensor device_copy = device.to(Device::cuda(0), stream);  // device -> device, stream-ordered
  EXPECT_NE(device_copy.data(), device.data());
  device = Tensor();  // dropped while the copy may still run: its use on `stream` is recorded
  Tensor back = device_copy.to(Device::cpu(), stream);
  EXPECT_EQ(back.memory_space(), MemorySpace::host_pageable);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * sizeof(values[0])), 0);
}

TEST(CopyGpu, StreamOfAnotherDeviceIsInvalid) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices, found " << cuda_device_count();
  Stream s0(Device::cuda(0));
  Stream s1(Device::cuda(1));
  Tensor d0 = Tensor::empty({16}, f32, Device::cuda(0), s0);
  std::vector<float> host(16);
  EXPECT_THROW(copy(TensorView(host.data(), {16}), d0, s1), InvalidArgument);
  s0.synchronize();
}

}  // namespace
}  // namespace cuplan
