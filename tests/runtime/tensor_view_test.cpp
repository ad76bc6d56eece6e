// SPDX-License-Identifier: Apache-2.0
// TensorView: validation messages, axis access, contiguity, memory-space detection, DLPack, layout helpers.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/tensor.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using namespace dlpack;  // DLPack's names, as cuplan declares them (cuplan/dlpack.hpp)

// Runs `make`, expects InvalidArgument, and checks that the message holds every fragment.
template <class F>
void expect_invalid(F make, std::initializer_list<const char*> fragments) {
  try {
    make();
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    for (const char* f : fragments) EXPECT_NE(m.find(f), std::string::npos) << "missing '" << f << "' in: " << m;
  }
}

// Braced strides are the first stride call users write: every constructor form takes them.
TEST(TensorView, BracedStridesInEveryForm) {
  std::vector<std::complex<float>> h(64 * 256);
  const void* raw = h.data();
  const Dims column_major{1, 64};
  const Dims row_major{256, 1};

  const TensorView untyped(raw, c64, {64, 256}, {1, 64});
  EXPECT_EQ(untyped.strides(), column_major);
  EXPECT_EQ(untyped.dtype(), c64);
  const TensorView untyped_device(raw, c64, {64, 256}, {1, 64}, Device::cpu());
  EXPECT_EQ(untyped_device.strides(), column_major);
  EXPECT_EQ(untyped_device.device(), Device::cpu());
  const TensorView untyped_default(raw, c64, {64, 256});
  EXPECT_EQ(untyped_default.strides(), row_major);
  const TensorView untyped_empty_braces(raw, c64, {64, 256}, {}, Device::cpu());  // {}: row-major, as before
  EXPECT_EQ(untyped_empty_braces.strides(), row_major);
  const TensorView untyped_nullopt(raw, c64, {64, 256}, std::nullopt, Device::cpu());
  EXPECT_EQ(untyped_nullopt.strides(), row_major);

  const TensorView typed(h.data(), {64, 256}, {1, 64});
  EXPECT_EQ(typed.strides(), column_major);
  EXPECT_EQ(typed.dtype(), c64);
  const TensorView typed_device(h.data(), {64, 256}, {1, 64}, Device::cpu());
  EXPECT_EQ(typed_device.strides(), column_major);
  const TensorView typed_default(h.data(), {64, 256});
  EXPECT_EQ(typed_default.strides(), row_major);
  const TensorView typed_empty_braces(h.data(), {64, 256}, {}, Device::cpu());
  EXPECT_EQ(typed_empty_braces.strides(), row_major);
  const Strides named{1, 64};
  const TensorView typed_named(h.data(), {64, 256}, named);
  EXPECT_EQ(typed_named.strides(), column_major);
  const std::optional<Strides> maybe = named;
  const TensorView typed_optional(h.data(), {64, 256}, maybe, Device::cpu());
  EXPECT_EQ(typed_optional.strides(), column_major);

  // Braced strides are validated like any others.
  expect_invalid([&] { TensorView bad(raw, c64, {64, 256}, {1}); }, {"strides", "[1]"});
}

TEST(TensorView, FromTypedPointerDefaultsToRowMajorHost) {
  std::vector<std::complex<float>> h(6 * 4);
  TensorView x(h.data(), {6, 4});
  EXPECT_EQ(x.dtype(), c64);
  EXPECT_EQ(x.shape(), (Dims{6, 4}));
  EXPECT_EQ(x.strides(), (Dims{4, 1}));
  EXPECT_EQ(x.ndim(), 2);
  EXPECT_EQ(x.numel(), 24);
  EXPECT_EQ(x.data(), h.data());
  EXPECT_TRUE(x.on_host());
  EXPECT_EQ(x.memory_space(), MemorySpace::host_pageable);  // a std::vector is never pinned
  EXPECT_EQ(x.device(), Device::cpu());
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_EQ(x.span_bytes(), 24 * sizeof(std::complex<float>));
}

TEST(TensorView, NullDataWithElementsIsInvalid) {
  expect_invalid(
      [] {
        TensorView(static_cast<const void*>(nullptr), f32, {2, 3});
      },
      {"null", "non-null", "[2, 3]", "6 elements"});
  // An empty view may have a null pointer.
  TensorView empty(static_cast<const void*>(nullptr), f32, {0, 3});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.span_bytes(), 0u);
}

TEST(TensorView, NegativeExtentIsInvalid) {
  float v[4];
  expect_invalid([&] { TensorView(v, {2, -2}); }, {"axis 1", ">= 0", "-2"});
}

TEST(TensorView, StridesRankMismatchIsInvalid) {
  float v[6];
  expect_invalid([&] { TensorView(v, {2, 3}, Strides{1}); }, {"rank 1", "expected rank 2", "[2, 3]"});
}

TEST(TensorView, ByteSpanOverflowIsInvalid) {
  float v[4];
  const std::int64_t huge = std::int64_t{1} << 62;
  expect_invalid([&] { TensorView(v, {2, 2}, Strides{huge, 1}); }, {"[2, 2]", "2^63 bytes"});
  expect_invalid([&] { TensorView(v, {4, 2}, Strides{huge, 1}); }, {"64-bit"});
}

TEST(TensorView, AxisAccessWithNegativeIndices) {
  double v[24];
  TensorView x(v, {2, 3, 4});
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EQ(x.size(-1), 4);
  EXPECT_EQ(x.size(-3), 2);
  EXPECT_EQ(x.stride(-1), 1);
  EXPECT_EQ(x.stride(0), 12);
  expect_invalid([&] { (void)x.size(3); }, {"TensorView::size", "axis 3", "3-D", "-3 <= axis < 3"});
  expect_invalid([&] { (void)x.stride(-4); }, {"TensorView::stride", "axis -4"});
}

TEST(TensorView, ContiguityIgnoresUnitAxes) {
  float v[64];
  EXPECT_TRUE(TensorView(v, {4, 1, 8}, Strides{8, 1000, 1}).is_contiguous());
  EXPECT_FALSE(TensorView(v, {4, 8}, Strides{1, 4}).is_contiguous());
  EXPECT_FALSE(TensorView(v, {4, 8}, Strides{16, 1}).is_contiguous());
  EXPECT_TRUE(TensorView(v, {0, 8}, Strides{1, 4}).is_contiguous());
}

TEST(TensorView, SpanBytesCoversNegativeAndGappedStrides) {
  float v[64];
  EXPECT_EQ(TensorView(v, {4, 8}, Strides{16, 1}).span_bytes(), (3 * 16 + 7 + 1) * sizeof(float));
  EXPECT_EQ(TensorView(v + 63, {4, 8}, Strides{-16, -2}).span_bytes(), (3 * 16 + 7 * 2 + 1) * sizeof(float));
}

TEST(TensorView, StatedCpuDeviceForHostMemory) {
  float v[4];
  TensorView x(v, {4}, std::nullopt, Device::cpu());
  EXPECT_EQ(x.device(), Device::cpu());
  EXPECT_TRUE(x.on_host());
}

TEST(TensorView, FullDescriptionChecksSpaceAgainstDevice) {
  float v[4];
  TensorView x(v, f32, {4}, Strides{1}, Device::cpu(), MemorySpace::host_pinned);
  EXPECT_EQ(x.memory_space(), MemorySpace::host_pinned);
  expect_invalid([&] { TensorView(v, f32, {4}, Strides{1}, Device::cpu(), MemorySpace::device); },
                 {"device", "cpu", "expected a CUDA device"});
}

// A stated CUDA device of negative index is refused by both constructors that take a device, on any machine (it
// used to be accepted and fail later in a stream lookup, as NotSupported naming no operand).
TEST(TensorView, StatedCudaDeviceOfNegativeIndexIsInvalid) {
  float v[4];
  for (const int bad : {-1, -5}) {
    const std::string got = "got " + std::to_string(bad);
    expect_invalid([&] { TensorView(v, {4}, std::nullopt, Device::cuda(bad)); },
                   {"TensorView: device", "index of 0 or more", got.c_str()});
    expect_invalid([&] { TensorView(v, f32, {4}, Strides{1}, Device::cuda(bad), MemorySpace::device); },
                   {"TensorView: device", "index of 0 or more", got.c_str()});
  }
}

TEST(PointerInfo, HostPointersAreHostMemory) {
  int on_stack = 0;
  std::vector<double> on_heap(16);
  for (const void* p : {static_cast<const void*>(&on_stack), static_cast<const void*>(on_heap.data())}) {
    const PointerInfo info = pointer_info(p);
    EXPECT_EQ(info.space, MemorySpace::host_pageable);
    EXPECT_EQ(info.device, Device::cpu());
  }
  EXPECT_EQ(pointer_info(nullptr).space, MemorySpace::host_pageable);
}

TEST(PointerInfo, DetectsDevicePinnedAndManagedMemory) {
  CUPLAN_REQUIRE_GPU();
  void* device = nullptr;
  void* pinned = nullptr;
  void* managed = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 256), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, 256), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&managed, 256), cudaSuccess);
  int current = 0;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(pointer_info(device).space, MemorySpace::device);
  EXPECT_EQ(pointer_info(device).device, Device::cuda(current));
  EXPECT_EQ(pointer_info(pinned).space, MemorySpace::host_pinned);
  EXPECT_EQ(pointer_info(pinned).device, Device::cpu());
  EXPECT_EQ(pointer_info(managed).space, MemorySpace::managed);
  EXPECT_EQ(pointer_info(managed).device, Device::cuda(current));
  // Views find the same from the pointer.
  TensorView dv(static_cast<float*>(device), {64});
  EXPECT_EQ(dv.memory_space(), MemorySpace::device);
  EXPECT_EQ(dv.device(), Device::cuda(current));
  EXPECT_FALSE(dv.on_host());
  EXPECT_EQ(TensorView(static_cast<float*>(pinned), {64}).memory_space(), MemorySpace::host_pinned);
  // Stating the CPU for device memory is a mistake worth naming.
  expect_invalid([&] { TensorView(static_cast<float*>(device), {64}, std::nullopt, Device::cpu()); },
                 {"stated as cpu", "device memory"});
  // A failed query leaves no sticky error behind.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_EQ(cudaFree(managed), cudaSuccess);
}

TEST(TensorView, FromDLPackWithStridesAndByteOffset) {
  std::vector<double> storage(64);
  std::int64_t shape[] = {3, 4};
  std::int64_t strides[] = {1, 8};
  DLTensor t{};
  t.data = storage.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 64, 1};
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 2 * sizeof(double);
  TensorView x(t);
  EXPECT_EQ(x.dtype(), f64);
  EXPECT_EQ(x.shape(), (Dims{3, 4}));
  EXPECT_EQ(x.strides(), (Dims{1, 8}));
  EXPECT_EQ(x.data(), storage.data() + 2);
  EXPECT_EQ(x.memory_space(), MemorySpace::host_pageable);

  t.strides = nullptr;  // null strides mean row-major
  t.dtype = {kDLComplex, 64, 1};
  TensorView y(t);
  EXPECT_EQ(y.dtype(), c64);
  EXPECT_EQ(y.strides(), (Dims{4, 1}));
}

// A DLTensor of `v`, one dimension `shape`, on the CPU; a test sets the dtype and may move the device.
DLTensor cpu_vector(float* v, std::int64_t* shape) {
  DLTensor t{};
  t.data = v;
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.shape = shape;
  return t;
}

TEST(TensorView, DLPackDtypeMapping) {
  float v[4];
  std::int64_t shape[] = {4};
  DLTensor t = cpu_vector(v, shape);
  const std::pair<DLDataType, DType> cases[] = {
      {{kDLFloat, 16, 1}, f16},     {{kDLFloat, 32, 1}, f32}, {{kDLBfloat, 16, 1}, bf16}, {{kDLComplex, 32, 1}, c32},
      {{kDLComplex, 128, 1}, c128}, {{kDLInt, 8, 1}, i8},     {{kDLInt, 32, 1}, i32},     {{kDLInt, 64, 1}, i64}};
  for (const auto& [dl, expected] : cases) {
    t.dtype = dl;
    EXPECT_EQ(TensorView(t).dtype(), expected) << expected.name();
  }
}

TEST(TensorView, DLPackUnsupportedDtypeAndDeviceAreNotSupported) {
  float v[4];
  std::int64_t shape[] = {4};
  DLTensor t = cpu_vector(v, shape);
  t.dtype = {kDLUInt, 16, 1};
  EXPECT_THROW(TensorView{t}, NotSupported);
  t.dtype = {kDLFloat, 32, 4};  // vector lanes
  EXPECT_THROW(TensorView{t}, NotSupported);
  t.dtype = {kDLFloat, 32, 1};
  t.device = {kDLOpenCL, 0};
  EXPECT_THROW(TensorView{t}, NotSupported);
}

TEST(TensorView, DLPackDeviceTypesMapToMemorySpaces) {
  float v[4];
  std::int64_t shape[] = {4};
  DLTensor t = cpu_vector(v, shape);
  t.dtype = {kDLFloat, 32, 1};
  t.device = {kDLCUDAHost, 0};
  EXPECT_EQ(TensorView(t).memory_space(), MemorySpace::host_pinned);
  t.device = {kDLCUDA, 0};
  const TensorView d(t);
  EXPECT_EQ(d.memory_space(), MemorySpace::device);
  EXPECT_EQ(d.device(), Device::cuda(0));
}

TEST(Layout, NormalizeAxis) {
  EXPECT_EQ(detail::normalize_axis(-1, 3, "f"), 2);
  EXPECT_EQ(detail::normalize_axis(0, 3, "f"), 0);
  expect_invalid([] { detail::normalize_axis(3, 3, "fft"); }, {"fft", "axis 3", "-3 <= axis < 3"});
}

TEST(Layout, OverlapDetection) {
  EXPECT_TRUE(detail::is_non_overlapping(Dims{4, 8}, Dims{8, 1}));
  EXPECT_TRUE(detail::is_non_overlapping(Dims{4, 8}, Dims{1, 4}));
  EXPECT_TRUE(detail::is_non_overlapping(Dims{4, 8}, Dims{16, -1}));
  EXPECT_TRUE(detail::is_non_overlapping(Dims{4, 1}, Dims{1, 0}));   // unit axes do not alias
  EXPECT_FALSE(detail::is_non_overlapping(Dims{4, 8}, Dims{0, 1}));  // broadcast
  EXPECT_FALSE(detail::is_non_overlapping(Dims{4, 8}, Dims{4, 1}));  // rows overlap
  EXPECT_TRUE(detail::is_non_overlapping(Dims{0, 8}, Dims{0, 0}));   // empty
  float v[64];
  expect_invalid(
      [&] {
        detail::check_non_overlapping(TensorView(v, {4, 8}, Strides{4, 1}), "out", "fft");
      },
      {"fft", "out", "overlaps", "[4, 8]", "[4, 1]"});
}

TEST(Layout, DensityAndReduction) {
  EXPECT_TRUE(detail::is_dense(Dims{4, 8}, Dims{1, 4}));
  EXPECT_TRUE(detail::is_dense(Dims{2, 3, 4}, Dims{4, 8, 1}));
  EXPECT_FALSE(detail::is_dense(Dims{4, 8}, Dims{16, 1}));
  EXPECT_FALSE(detail::is_dense(Dims{4, 8}, Dims{-8, 1}));
  EXPECT_TRUE(detail::is_row_major(Dims{4, 8}, Dims{8, 1}));
  EXPECT_FALSE(detail::is_row_major(Dims{4, 8}, Dims{1, 4}));

  // Dense on both sides with the same order collapses to one block.
  auto g = detail::reduce_copy(Dims{2, 3, 4}, Dims{12, 4, 1}, Dims{12, 4, 1});
  EXPECT_TRUE(detail::is_single_block(g));
  EXPECT_EQ(g.numel, 24);
  // Column-major on both sides too (axes reordered by the destination's strides).
  g = detail::reduce_copy(Dims{5, 7}, Dims{1, 5}, Dims{1, 5});
  EXPECT_TRUE(detail::is_single_block(g));
  // Rows of a larger matrix into a dense one: pitched 2-D.
  g = detail::reduce_copy(Dims{5, 7}, Dims{10, 1}, Dims{7, 1});
  EXPECT_TRUE(detail::is_pitched_2d(g));
  EXPECT_EQ(g.shape[0], 5);
  EXPECT_EQ(g.src_strides[0], 10);
  // A transpose is neither.
  g = detail::reduce_copy(Dims{5, 7}, Dims{1, 5}, Dims{7, 1});
  EXPECT_FALSE(detail::is_single_block(g));
  EXPECT_FALSE(detail::is_pitched_2d(g));
  EXPECT_EQ(g.rank, 2);
}

}  // namespace
}  // namespace cuplan
