// SPDX-License-Identifier: Apache-2.0
// Every index a caller passes (device, axis, enum value, block) that is out of range is an InvalidArgument giving
// the valid range and the value given (docs/misuse.md). The GPU case needs a device (the device count is the range).

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/dlpack.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

template <class F>
std::string invalid_argument_of(F&& call) {
  return testing::message_of<InvalidArgument>(std::forward<F>(call));
}

void expect_names(const std::string& message, std::initializer_list<const char*> parts) {
  for (const char* part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "missing \"" << part << "\" in: " << message;
}

TEST(IndexRangeErrors, MemoryCallsNameTheDeviceRange) {
  expect_names(invalid_argument_of([] { (void)memory::stats(Device::cuda(70)); }),
               {"memory::stats", "expected a CUDA device index in [0, 64)", "got 70"});
  expect_names(invalid_argument_of([] { memory::reset_peak(Device::cuda(-3)); }),
               {"memory::reset_peak", "in [0, 64)", "got -3"});
  expect_names(invalid_argument_of([] { (void)memory::stats(Device::cpu()); }),
               {"memory::stats", "expected a CUDA device, got cpu"});
}

TEST(IndexRangeErrors, DlpackDeviceIdNamesTheRange) {
  std::vector<float> values(4);
  std::int64_t shape[1] = {4};
  dlpack::DLTensor dl{values.data(), {dlpack::kDLCUDA, -2}, 1, {dlpack::kDLFloat, 32, 1}, shape, nullptr, 0};
  const std::string message = invalid_argument_of([&] { (void)TensorView(dl); });
  expect_names(message, {"device.device_id", "expected a CUDA device index", "got -2"});
  if (cuda_available())
    expect_names(message, {std::string("in [0, " + std::to_string(cuda_device_count()) + ")").c_str()});
  else
    expect_names(message, {">= 0"});
}

TEST(IndexRangeErrors, AxesNameTheRange) {
  std::vector<std::complex<float>> x(6 * 8);
  const TensorView view(x.data(), {6, 8});
  expect_names(invalid_argument_of([&] { (void)view.size(2); }), {"axis 2", "expected -2 <= axis < 2"});
  expect_names(invalid_argument_of([&] { (void)view.stride(-3); }), {"axis -3", "expected -2 <= axis < 2"});
  expect_names(invalid_argument_of([&] { (void)fft(view, {.axes = {2}, .execution = Execution::cpu()}); }),
               {"axes", "axis 2", "expected -2 to 1"});
}

TEST(IndexRangeErrors, MatmulOperandNamesTheValidValues) {
  std::vector<float> a(4 * 3), b(3 * 5);
  Matmul mm(TensorView(a.data(), {4, 3}), TensorView(b.data(), {3, 5}), {.execution = Execution::cpu()});
  expect_names(invalid_argument_of([&] {
                 mm.reset_operand(static_cast<MatmulOperand>(9), TensorView(a.data(), {4, 3}));
               }),
               {"reset_operand", "expected a MatmulOperand (a, b, c, bias, epilog_aux)", "got value 9"});
}

TEST(IndexRangeErrors, DeviceIndexNamesTheVisibleDevices) {
  CUPLAN_REQUIRE_GPU();
  const int count = cuda_device_count();
  const std::string range = "in [0, " + std::to_string(count) + ")";
  const std::string got = "got " + std::to_string(count);
  expect_names(invalid_argument_of([&] { Device::cuda(count).use(); }), {"Device::use", range.c_str(), got.c_str()});
  expect_names(invalid_argument_of([&] { Stream s(Device::cuda(count)); }), {range.c_str(), got.c_str()});
}

}  // namespace
}  // namespace cuplan
