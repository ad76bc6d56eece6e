// SPDX-License-Identifier: Apache-2.0
// Work-area options: the policy's range, automatic (owned for the classes, shared for the function forms), and an
// external buffer's memory, contiguity, alignment, size, device and overlap with the call's operands, each refused
// with a message naming the option, the expected and the actual value. No GPU: the views name their memory space, so
// nothing is queried.

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "cuplan/errors.hpp"
#include "cuplan/names.hpp"
#include "plan/work_area.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using detail::function_form_work_area;
using detail::resolve_work_area;
using testing::expect_throw_naming;

// A device view at `address` (never dereferenced: resolve and check read the view's fields only).
TensorView device_bytes(std::uintptr_t address, std::int64_t bytes, int device = 0) {
  return TensorView(reinterpret_cast<void*>(address), i8, {bytes}, Strides{1}, Device::cuda(device),
                    MemorySpace::device);
}

TEST(WorkAreaOptions, AutomaticIsOwnedForTheClassesAndSharedForTheFunctionForms) {
  EXPECT_EQ(resolve_work_area(WorkAreaPolicy::automatic, std::nullopt, "FFT").policy, WorkAreaPolicy::owned);
  static_assert(function_form_work_area(WorkAreaPolicy::automatic) == WorkAreaPolicy::shared);
  EXPECT_EQ(resolve_work_area(function_form_work_area(WorkAreaPolicy::automatic), std::nullopt, "fft").policy,
            WorkAreaPolicy::shared);
  for (WorkAreaPolicy p : {WorkAreaPolicy::owned, WorkAreaPolicy::shared, WorkAreaPolicy::external}) {
    EXPECT_EQ(function_form_work_area(p), p);  // an explicit choice stays
    if (p != WorkAreaPolicy::external) {
      EXPECT_EQ(resolve_work_area(p, std::nullopt, "FFT").policy, p);
    }
  }
  // A value outside the enum is not mapped: the check refuses it by number on every form.
  EXPECT_EQ(function_form_work_area(static_cast<WorkAreaPolicy>(9)), static_cast<WorkAreaPolicy>(9));
}

TEST(WorkAreaOptions, PolicyOutsideTheEnumNamesTheOptionAndTheValue) {
  expect_throw_naming<InvalidArgument>(
      [] { (void)resolve_work_area(static_cast<WorkAreaPolicy>(7), std::nullopt, "Matmul"); },
      {"Matmul", "work_area", "WorkAreaPolicy", "7"});
  EXPECT_EQ(to_string(static_cast<WorkAreaPolicy>(7)), "?");
  EXPECT_EQ(to_string(WorkAreaPolicy::shared), "shared");
}

TEST(WorkAreaOptions, ExternalNeedsADeviceBufferAndOnlyExternalTakesOne) {
  expect_throw_naming<InvalidArgument>([] { (void)resolve_work_area(WorkAreaPolicy::external, std::nullopt, "FFT"); },
                                       {"FFT", "work_area_buffer", "expected a device buffer", "none"});
  const TensorView buffer = device_bytes(0x10000, 4096);
  expect_throw_naming<InvalidArgument>([&] { (void)resolve_work_area(WorkAreaPolicy::shared, buffer, "FFT"); },
                                       {"FFT", "work_area_buffer", "expected none", "shared"});
  std::vector<std::int8_t> host(4096);
  const TensorView host_view(host.data(), i8, {4096}, Strides{1}, Device::cpu(), MemorySpace::host_pageable);
  expect_throw_naming<InvalidArgument>([&] { (void)resolve_work_area(WorkAreaPolicy::external, host_view, "FFT"); },
                                       {"work_area_buffer", "expected device or managed memory", "host_pageable"});
}

TEST(WorkAreaOptions, ExternalBufferMustBeAlignedTo256Bytes) {
  expect_throw_naming<InvalidArgument>(
      [] { (void)resolve_work_area(WorkAreaPolicy::external, device_bytes(0x10040, 4096), "Matmul"); },
      {"Matmul", "work_area_buffer", "aligned to 256 bytes", "0x10040", "64 bytes past"});
  const detail::WorkAreaSpec spec = resolve_work_area(WorkAreaPolicy::external, device_bytes(0x10100, 4096), "FFT");
  EXPECT_EQ(spec.policy, WorkAreaPolicy::external);
  EXPECT_EQ(spec.buffer_bytes, 4096u);
  EXPECT_EQ(spec.buffer_device, 0);
}

TEST(WorkAreaOptions, ExternalBufferIsCheckedForSizeAndDeviceWhenPlanned) {
  const detail::WorkArea area(resolve_work_area(WorkAreaPolicy::external, device_bytes(0x10000, 4096, 1), "FFT"),
                              "FFT");
  EXPECT_NO_THROW(area.check(4096, 1));
  EXPECT_NO_THROW(area.check(0, 1));
  expect_throw_naming<InvalidArgument>([&] { area.check(8192, 1); },
                                       {"FFT", "work_area_buffer", "at least 8192 bytes", "got 4096 bytes"});
  expect_throw_naming<InvalidArgument>([&] { area.check(16, 0); },
                                       {"FFT", "work_area_buffer", "memory of cuda:0", "got memory of cuda:1"});
  // The other policies have nothing of the caller's to check, and hold nothing before their first use.
  const detail::WorkArea owned(resolve_work_area(WorkAreaPolicy::owned, std::nullopt, "FFT"), "FFT");
  EXPECT_NO_THROW(owned.check(std::size_t{1} << 40, 3));
  EXPECT_EQ(owned.held_bytes(), 0u);
}

TEST(WorkAreaOptions, ExternalBufferMustBeContiguousAndApartFromTheOperands) {
  const TensorView strided(reinterpret_cast<void*>(0x10000), i8, {1024}, Strides{2}, Device::cuda(0),
                           MemorySpace::device);
  expect_throw_naming<InvalidArgument>([&] { (void)resolve_work_area(WorkAreaPolicy::external, strided, "FFT"); },
                                       {"FFT", "work_area_buffer", "expected a contiguous buffer"});
  const detail::WorkArea area(resolve_work_area(WorkAreaPolicy::external, device_bytes(0x10000, 4096), "FFT"), "FFT");
  const auto c64_at = [](std::uintptr_t address) {
    return TensorView(reinterpret_cast<void*>(address), c64, {4, 4}, Strides{4, 1}, Device::cuda(0),
                      MemorySpace::device);
  };
  // The last byte of the area and the first of an operand: refused; one past the end: apart.
  expect_throw_naming<InvalidArgument>(
      [&] { area.check_apart(c64_at(0x10000 + 4096 - 8), "out"); },
      {"FFT", "work_area_buffer", "apart from out", "0x10000", "0x11000", "overlapping out"});
  EXPECT_NO_THROW(area.check_apart(c64_at(0x10000 + 4096), "operand"));
  EXPECT_NO_THROW(area.check_apart(c64_at(0x10000 - 128), "operand"));  // ends at the area's first byte
  // A strided operand whose elements all fall in the area's gaps would be apart; one that reaches in is not.
  const TensorView straddling(reinterpret_cast<void*>(0x10000 - 64), c64, {2}, Strides{512}, Device::cuda(0),
                              MemorySpace::device);
  expect_throw_naming<InvalidArgument>([&] { area.check_apart(straddling, "operand"); }, {"apart from operand"});
  // Only external areas are the caller's memory.
  const detail::WorkArea shared(resolve_work_area(WorkAreaPolicy::shared, std::nullopt, "FFT"), "FFT");
  EXPECT_NO_THROW(shared.check_apart(c64_at(0x10000), "operand"));
}

}  // namespace
}  // namespace cuplan
