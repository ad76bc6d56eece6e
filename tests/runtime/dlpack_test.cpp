// SPDX-License-Identifier: Apache-2.0
// DLPack exchange with ownership on host tensors: export fields for every dtype, memory kept alive by the managed
// tensor after the Tensor is gone, export -> import round trips with the deleter called exactly once, and misuse.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using namespace dlpack;  // DLPack's names, as cuplan declares them (cuplan/dlpack.hpp)

// Counts deleter calls of managed tensors whose deleter the test replaced with counted_deleter.
template <class Managed>
struct DeleterCount {
  static inline int calls = 0;
  static inline void (*original)(Managed*) = nullptr;
  static void counted_deleter(Managed* self) {
    ++calls;
    original(self);
  }
  static Managed* watch(Managed* managed) {
    calls = 0;
    original = managed->deleter;
    managed->deleter = &counted_deleter;
    return managed;
  }
};

struct DTypeRow {
  DType dtype;
  std::uint8_t code;
};

TEST(DLPackExport, MapsDtypeDeviceShapeAndStrides) {
  const std::vector<DTypeRow> rows = {{f16, kDLFloat},   {bf16, kDLBfloat}, {f32, kDLFloat},    {f64, kDLFloat},
                                      {c32, kDLComplex}, {c64, kDLComplex}, {c128, kDLComplex}, {i8, kDLInt},
                                      {i32, kDLInt},     {i64, kDLInt}};
  for (const DTypeRow& row : rows) {
    const Tensor t = Tensor::empty({2, 3, 5}, row.dtype);
    DLManagedTensor* managed = t.to_dlpack();
    ASSERT_NE(managed, nullptr);
    const DLTensor& dl = managed->dl_tensor;
    EXPECT_EQ(dl.dtype.code, row.code) << row.dtype.name();
    EXPECT_EQ(dl.dtype.bits, row.dtype.size() * 8) << row.dtype.name();
    EXPECT_EQ(dl.dtype.lanes, 1) << row.dtype.name();
    EXPECT_EQ(dl.device.device_type, kDLCPU);
    EXPECT_EQ(dl.device.device_id, 0);
    ASSERT_EQ(dl.ndim, 3);
    EXPECT_EQ(std::vector<std::int64_t>(dl.shape, dl.shape + 3), (std::vector<std::int64_t>{2, 3, 5}));
    EXPECT_EQ(std::vector<std::int64_t>(dl.strides, dl.strides + 3), (std::vector<std::int64_t>{15, 5, 1}));
    EXPECT_EQ(static_cast<char*>(dl.data) + dl.byte_offset, t.data());
    // The unowned import reads the export back as the same view.
    const TensorView back(dl);
    EXPECT_EQ(back.dtype(), row.dtype);
    EXPECT_EQ(back.data(), t.data());
    managed->deleter(managed);
  }
}

TEST(DLPackExport, ScalarAndEmptyTensors) {
  const Tensor scalar = Tensor::empty({}, f64);
  DLManagedTensor* managed = scalar.to_dlpack();
  EXPECT_EQ(managed->dl_tensor.ndim, 0);
  EXPECT_EQ(TensorView(managed->dl_tensor).numel(), 1);
  managed->deleter(managed);

  const Tensor empty = Tensor::empty({4, 0}, f32);
  managed = empty.to_dlpack();
  EXPECT_EQ(TensorView(managed->dl_tensor).numel(), 0);
  const Tensor back = Tensor::from_dlpack(managed);
  EXPECT_EQ(back.shape(), (Dims{4, 0}));
}

TEST(DLPackExport, MemoryOutlivesTheTensorUntilTheDeleter) {
  DLManagedTensor* managed = nullptr;
  {
    Tensor t = Tensor::empty({1000}, f32);
    for (int i = 0; i < 1000; ++i) t.data<float>()[i] = static_cast<float>(i) * 0.5F;
    managed = t.to_dlpack();
  }  // the only Tensor is gone; the managed tensor still owns a share of the memory
  const auto* values = reinterpret_cast<const float*>(static_cast<const char*>(managed->dl_tensor.data) +
                                                      managed->dl_tensor.byte_offset);
  // Another allocation of the same size must not reuse the bytes (under ASan a freed block would be reported here).
  const Tensor other = Tensor::empty({1000}, f32);
  EXPECT_NE(other.data(), static_cast<const void*>(values));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(values[i], static_cast<float>(i) * 0.5F) << i;
  managed->deleter(managed);
}

TEST(DLPackExport, RoundTripSharesMemoryAndCallsTheDeleterOnce) {
  Tensor t = Tensor::empty({8, 4}, c64);
  for (int i = 0; i < 32; ++i) t.data<std::complex<float>>()[i] = {static_cast<float>(i), -1.0F};
  void* const data = t.data();
  using Count = DeleterCount<DLManagedTensor>;
  DLManagedTensor* managed = Count::watch(t.to_dlpack());
  t = Tensor();
  Tensor back = Tensor::from_dlpack(managed);
  EXPECT_TRUE(back.owning());
  EXPECT_EQ(back.data(), data);
  EXPECT_EQ(back.dtype(), c64);
  EXPECT_EQ(back.shape(), (Dims{8, 4}));
  EXPECT_EQ(back.memory_space(), MemorySpace::host_pageable);
  EXPECT_EQ(back.data<std::complex<float>>()[31], std::complex<float>(31.0F, -1.0F));
  Tensor copy = back;
  back = Tensor();
  EXPECT_EQ(Count::calls, 0) << "a copy of the imported Tensor still holds the memory";
  // A cuplan call on the imported tensor works like on any owning Tensor.
  const Tensor moved = copy.to(Device::cpu());
  EXPECT_EQ(moved.data<std::complex<float>>()[5], std::complex<float>(5.0F, -1.0F));
  copy = Tensor();
  EXPECT_EQ(Count::calls, 1);
}

TEST(DLPackExport, StridedAndAliasedTensorsKeepTheirLayout) {
  const Tensor column_major = Tensor::empty_strided({3, 4}, {1, 3}, f64);
  DLManagedTensor* managed = column_major.to_dlpack();
  EXPECT_EQ(std::vector<std::int64_t>(managed->dl_tensor.strides, managed->dl_tensor.strides + 2),
            (std::vector<std::int64_t>{1, 3}));
  const Tensor back = Tensor::from_dlpack(managed);
  EXPECT_EQ(back.strides(), (Dims{1, 3}));
  EXPECT_EQ(back.data(), column_major.data());

  // A view into the middle of an owner: data is the owner's start, byte_offset leads to element 0.
  const Tensor owner = Tensor::empty({100}, f32);
  const Tensor tail = Tensor::alias(owner, TensorView(owner.data<float>() + 10, {5, 2}, {-2, 1}));
  managed = tail.to_dlpack();
  EXPECT_EQ(managed->dl_tensor.data, owner.data());
  EXPECT_EQ(managed->dl_tensor.byte_offset, 10 * sizeof(float));
  const Tensor tail_back = Tensor::from_dlpack(managed);
  EXPECT_EQ(tail_back.data(), tail.data());
  EXPECT_EQ(tail_back.strides(), (Dims{-2, 1}));
  // The imported owner covers the whole layout: an alias of its lowest element is accepted.
  EXPECT_NO_THROW(Tensor::alias(tail_back, TensorView(owner.data<float>() + 2, {2})));
}

TEST(DLPackExport, HostStreamsMakeTheHandshakeWithoutWork) {
  Stream producer, consumer;
  const Tensor t = Tensor::empty({16}, f32, Device::cpu(), producer);
  t.record_stream(producer);
  DLManagedTensor* managed = t.to_dlpack({.stream = consumer});
  managed->deleter(managed);
  managed = t.to_dlpack({.stream = consumer, .producer = producer});
  const Tensor back = Tensor::from_dlpack(managed, {.stream = consumer, .producer = producer});
  EXPECT_EQ(back.data(), t.data());
}

TEST(DLPackExport, WrapOfBorrowedMemoryIsRejected) {
  std::vector<float> host(8);
  const Tensor wrapped = Tensor::wrap(TensorView(host.data(), {8}));
  testing::expect_throw_naming<InvalidArgument>(
      [&] { (void)wrapped.to_dlpack(); }, {"Tensor::to_dlpack: tensor", "expected an owning Tensor", "Tensor::wrap"});
}

TEST(DLPackExport, Float8MapsToTheFloat8Codes) {
  for (DType dtype : {DType(DTypeCode::f8_e4m3), DType(DTypeCode::f8_e5m2)}) {
    const Tensor t = Tensor::empty({4}, dtype);
    DLManagedTensor* managed = t.to_dlpack();
    EXPECT_EQ(managed->dl_tensor.dtype.code, dtype == DType(DTypeCode::f8_e4m3) ? kDLFloat8_e4m3fn : kDLFloat8_e5m2);
    EXPECT_EQ(managed->dl_tensor.dtype.bits, 8);
    EXPECT_EQ(Tensor::from_dlpack(managed).dtype(), dtype);
  }
}

TEST(DLPackImport, NullManagedTensorIsInvalid) {
  testing::expect_throw_naming<InvalidArgument>(
      [] { (void)Tensor::from_dlpack(static_cast<DLManagedTensor*>(nullptr)); },
      {"Tensor::from_dlpack: managed", "got null"});
}

TEST(DLPackImport, MalformedTensorLeavesOwnershipWithTheCaller) {
  using Count = DeleterCount<DLManagedTensor>;
  const Tensor t = Tensor::empty({4}, f32);
  DLManagedTensor* managed = Count::watch(t.to_dlpack());
  const std::int32_t ndim = managed->dl_tensor.ndim;
  managed->dl_tensor.ndim = -1;
  EXPECT_THROW((void)Tensor::from_dlpack(managed), InvalidArgument);
  managed->dl_tensor.ndim = ndim;
  std::int64_t* shape = managed->dl_tensor.shape;
  managed->dl_tensor.shape = nullptr;
  EXPECT_THROW((void)Tensor::from_dlpack(managed), InvalidArgument);
  managed->dl_tensor.shape = shape;
  const DLDataType dtype = managed->dl_tensor.dtype;
  managed->dl_tensor.dtype.lanes = 4;
  EXPECT_THROW((void)Tensor::from_dlpack(managed), NotSupported);
  managed->dl_tensor.dtype = dtype;
  managed->dl_tensor.device.device_type = kDLVulkan;
  EXPECT_THROW((void)Tensor::from_dlpack(managed), NotSupported);
  managed->dl_tensor.device.device_type = kDLCPU;
  EXPECT_EQ(Count::calls, 0);
  managed->deleter(managed);
  EXPECT_EQ(Count::calls, 1);
}

TEST(DLPackVersioned, RoundTripCarriesTheVersionAndCallsTheDeleterOnce) {
  using Count = DeleterCount<DLManagedTensorVersioned>;
  Tensor t = Tensor::empty({6}, i32);
  for (int i = 0; i < 6; ++i) t.data<std::int32_t>()[i] = i * 7;
  DLManagedTensorVersioned* managed = Count::watch(t.to_dlpack_versioned());
  EXPECT_EQ(managed->version.major, dlpack::version.major);
  EXPECT_EQ(managed->version.minor, dlpack::version.minor);
  EXPECT_EQ(managed->flags, 0U);
  t = Tensor();
  Tensor back = Tensor::from_dlpack(managed);
  EXPECT_EQ(back.data<std::int32_t>()[5], 35);
  back = Tensor();
  EXPECT_EQ(Count::calls, 1);
}

TEST(DLPackVersioned, OtherMajorVersionIsNotSupportedAndReleased) {
  using Count = DeleterCount<DLManagedTensorVersioned>;
  const Tensor t = Tensor::empty({6}, f32);
  DLManagedTensorVersioned* managed = Count::watch(t.to_dlpack_versioned());
  managed->version.major = dlpack::version.major + 1;
  EXPECT_THROW((void)Tensor::from_dlpack(managed), NotSupported);
  EXPECT_EQ(Count::calls, 1);
}

// A producer that flags its memory read-only (a NumPy array that is not writeable, a read-only mapping): the import
// is a read-only Tensor that cuplan reads but refuses to write, with InvalidArgument naming the operand.
TEST(DLPackVersioned, ReadOnlyFlagGivesATensorThatIsReadButNotWritten) {
  using Count = DeleterCount<DLManagedTensorVersioned>;
  Tensor t = Tensor::empty({8}, f32);
  for (int i = 0; i < 8; ++i) t.data<float>()[i] = static_cast<float>(i) * 0.5f;
  DLManagedTensorVersioned* managed = Count::watch(t.to_dlpack_versioned());
  managed->flags |= dlpack::flag_read_only;
  t = Tensor();
  Tensor imported = Tensor::from_dlpack(managed);
  EXPECT_TRUE(imported.read_only());
  std::vector<float> host(8, -7.0f);
  copy(imported, TensorView(host.data(), {8}));  // read
  EXPECT_EQ(host[7], 3.5f);
  try {
    copy(TensorView(host.data(), {8}), imported);
    ADD_FAILURE() << "expected InvalidArgument: the copy would write a read-only tensor";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("dst: expected writable memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(imported.data<float>()[0], 0.0f) << "the refused copy wrote nothing";
  // Exported again, it says read-only to the next consumer too.
  DLManagedTensorVersioned* again = imported.to_dlpack_versioned();
  EXPECT_EQ(again->flags & dlpack::flag_read_only, dlpack::flag_read_only);
  again->deleter(again);
  imported = Tensor();
  EXPECT_EQ(Count::calls, 1);
}

TEST(DLPackVersioned, ExportOfAReadOnlyTensorSetsTheFlagAndOnlyThat) {
  const Tensor t = Tensor::empty({4}, c64);
  DLManagedTensorVersioned* writable = t.to_dlpack_versioned();
  EXPECT_EQ(writable->flags, 0U);
  writable->deleter(writable);
  DLManagedTensorVersioned* read_only = t.as_read_only().to_dlpack_versioned();
  EXPECT_EQ(read_only->flags, dlpack::flag_read_only);
  const Tensor back = Tensor::from_dlpack(read_only);
  EXPECT_TRUE(back.read_only());
  EXPECT_EQ(back.data(), t.data());
}

}  // namespace
}  // namespace cuplan
