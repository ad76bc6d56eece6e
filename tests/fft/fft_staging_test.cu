// SPDX-License-Identifier: Apache-2.0
// Host operands with CUDA execution go through the staging engine (docs/staging.md). A small device_memory_limit
// forces many chunks, so every result here crosses chunk boundaries: batches that do not divide by the chunk,
// strided operands, in place, R2C and C2R, transforms over leading axes, pinned operands. Results are compared
// with a float64 reference on fresh random data; outputs are poisoned first. Peak device memory is read from the
// pool's statistics. The stream tests make the caller's stream (or an `after` event's stream) write the operand
// late: a pipeline that did not wait for it would transform stale data.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fft/fft_test_util.hpp"
#include "runtime/spin_kernel.cuh"
#include "runtime/storage.hpp"
#include "support/pinned_results.hpp"

namespace cuplan::testing {
namespace {

constexpr std::size_t KiB = 1024;

/// A host Tensor of `shape` poisoned with NaN (the result must overwrite every element).
Tensor poisoned(const Shape& shape, DType dtype) {
  Tensor t = Tensor::empty(shape, dtype, Device::cpu());
  std::vector<unsigned char> nan_bytes(dtype.size());
  if (dtype.real() == f32) {
    const float q = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t i = 0; i < dtype.size(); i += sizeof q) std::memcpy(nan_bytes.data() + i, &q, sizeof q);
  } else {
    const double q = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < dtype.size(); i += sizeof q) std::memcpy(nan_bytes.data() + i, &q, sizeof q);
  }
  auto* p = static_cast<unsigned char*>(t.data());
  for (std::int64_t i = 0; i < t.numel(); ++i) std::memcpy(p + i * dtype.size(), nan_bytes.data(), dtype.size());
  return t;
}

std::int64_t length_product(const std::vector<std::int64_t>& shape, const std::vector<int>& axes) {
  std::int64_t n = 1;
  for (int a : axes) n *= shape[static_cast<std::size_t>(a)];
  return n;
}

// C2C of a host operand under `limit`, into a poisoned `out`, against the float64 reference; the peak device
// memory of the call stays within the limit.
template <class T>
void check_staged_c2c(std::vector<std::int64_t> shape, std::vector<int> axes, std::size_t limit,
                      std::vector<std::int64_t> strides = {}) {
  auto host = HostArray<T>::random(shape, strides);
  FFT f(host.view(), {.axes = axes, .execution = Execution::cuda(), .device_memory_limit = limit});
  f.plan();
  Tensor out = poisoned(f.result_shape(), f.result_dtype());
  detail::reset_pool_peak(0);
  const std::size_t before = detail::pool_statistics(0).used;
  Tensor y = f.execute({.out = out.view()});
  const std::size_t peak = detail::pool_statistics(0).used_high;
  EXPECT_LE(peak - before, limit) << "peak device memory above device_memory_limit; " << f.describe();
  const auto expected = reference_dft(host.dense(), shape, axes, -1);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(dtype_of<T>, length_product(shape, axes)))
      << f.describe();
}

TEST(FftStaging, BatchThatDoesNotDivideByTheChunk) {
  CUPLAN_REQUIRE_GPU();
  // 37 rows of 64 c64 (1 KiB in + 1 KiB out each) under 16 KiB: a few rows per chunk and a shorter last chunk.
  check_staged_c2c<std::complex<float>>({37, 64}, {1}, 16 * KiB);
  check_staged_c2c<std::complex<double>>({41, 32}, {1}, 12 * KiB);
}

TEST(FftStaging, StridedHostOperandWithTwoBatchAxes) {
  CUPLAN_REQUIRE_GPU();
  // [5, 7, 32] with padded rows and planes; two batch axes. A plane (7 KiB of device data) exceeds the 6 KiB
  // limit, so each chunk fixes the outer axis and takes 2 rows of the inner one (the last of each plane takes 1).
  check_staged_c2c<std::complex<double>>({5, 7, 32}, {2}, 6 * KiB, {7 * 40 + 3, 40, 1});
}

TEST(FftStaging, TransformOverLeadingAxes) {
  CUPLAN_REQUIRE_GPU();
  // The batch axis is the innermost in memory: every chunk is a strided slice of the host operand.
  check_staged_c2c<std::complex<float>>({16, 12, 30}, {0, 1}, 16 * 12 * 8 * 2 * 4);
  check_staged_c2c<std::complex<double>>({9, 10, 23}, {0}, 9 * 16 * 2 * 5);
}

TEST(FftStaging, LargeOperandEqualsTheInMemoryPath) {
  CUPLAN_REQUIRE_GPU();
  // 96 MiB of c64 under a 40 MiB limit: many chunks on the pipelined path (a direct DFT reference would take
  // minutes here, so the reference is the same transform of a device copy; the small cases check against float64).
  const Shape shape{3072, 4096};
  const std::size_t limit = std::size_t{40} << 20;
  auto host = HostArray<std::complex<float>>::random({3072, 4096});
  Tensor device_copy = Tensor::wrap(host.view()).to(Device::cuda(0));
  Tensor in_memory = fft(device_copy, {.axes = {1}}).to(Device::cpu());
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = limit});
  f.plan();
  Tensor out = poisoned(shape, c64);
  detail::reset_pool_peak(0);
  const std::size_t before = detail::pool_statistics(0).used;
  f.execute({.out = out.view()});
  EXPECT_LE(detail::pool_statistics(0).used_high - before, limit) << f.describe();
  EXPECT_LT(relative_error(to_dense(out.view()), to_dense(in_memory.view())), 1e-6);
}

TEST(FftStaging, InPlaceC2C) {
  CUPLAN_REQUIRE_GPU();
  auto host = HostArray<std::complex<double>>::random({29, 48});
  const auto original = host.dense();
  FFT f(host.view(), {.axes = {1}, .inplace = true, .execution = Execution::cuda(), .device_memory_limit = 8 * KiB});
  f.plan();
  Tensor y = f.execute();
  EXPECT_EQ(y.data(), host.buffer.data());
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(original, {29, 48}, {1}, -1)), 1e-12);
}

TEST(FftStaging, R2CAndC2RInPlaceWithPaddedRows) {
  CUPLAN_REQUIRE_GPU();
  const std::int64_t rows = 23, n = 30, padded = 2 * (n / 2 + 1);
  auto host = HostArray<double>::random({rows, n}, {padded, 1});
  host.buffer.resize(static_cast<std::size_t>(rows * padded));
  const auto original = host.dense();
  FFT f(host.view(), {.axes = {1}, .inplace = true, .execution = Execution::cuda(), .device_memory_limit = 4 * KiB});
  f.plan();
  Tensor y = f.execute();
  EXPECT_EQ(y.data(), static_cast<void*>(host.buffer.data()));
  const auto full = reference_dft(original, {rows, n}, {1}, -1);
  EXPECT_LT(relative_error(to_dense(y.view()), truncate_axis(full, {rows, n}, 1, n / 2 + 1)), 1e-12);
  FFT back(y, {.axes = {1},
               .inplace = true,
               .execution = Execution::cuda(),
               .fft_type = FFTType::c2r,
               .device_memory_limit = 4 * KiB});
  back.plan();
  Tensor z = back.execute();
  EXPECT_LT(relative_error(to_dense(z.view()), scaled(original, static_cast<double>(n))), 1e-12);
}

TEST(FftStaging, R2CAndC2ROutOfPlaceOddLength) {
  CUPLAN_REQUIRE_GPU();
  const std::int64_t rows = 19, n = 45;
  auto host = HostArray<float>::random({rows, n});
  const auto original = host.dense();
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = 3 * KiB});
  f.plan();
  Tensor spectrum = poisoned(f.result_shape(), f.result_dtype());
  f.execute({.out = spectrum.view()});
  const auto full = reference_dft(original, {rows, n}, {1}, -1);
  EXPECT_LT(relative_error(to_dense(spectrum.view()), truncate_axis(full, {rows, n}, 1, n / 2 + 1)), tolerance(f32, n));
  FFT back(spectrum, {.axes = {1},
                      .last_axis_parity = Parity::odd,
                      .execution = Execution::cuda(),
                      .fft_type = FFTType::c2r,
                      .device_memory_limit = 3 * KiB});
  back.plan();
  Tensor z = poisoned(back.result_shape(), back.result_dtype());
  back.execute({.out = z.view()});
  EXPECT_LT(relative_error(to_dense(z.view()), scaled(original, static_cast<double>(n))), tolerance(f32, n));
}

TEST(FftStaging, PinnedOperandAndResultAreDmaDirectly) {
  CUPLAN_REQUIRE_GPU();
  const Shape shape{33, 128};
  Tensor x = Tensor::empty(shape, c64, Device::cpu(), {}, HostMemory::pinned);
  const auto values = random_vector<std::complex<float>>(static_cast<std::size_t>(x.numel()));
  std::memcpy(x.data(), values.data(), values.size() * sizeof values[0]);
  FFT f(x, {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = 16 * KiB});
  f.plan();
  Tensor out = Tensor::empty(shape, c64, Device::cpu(), {}, HostMemory::pinned);
  std::memset(out.data(), 0xff, static_cast<std::size_t>(out.numel()) * 8);  // NaN patterns
  f.execute({.out = out.view()});
  std::vector<cd> dense(values.begin(), values.end());
  EXPECT_LT(relative_error(to_dense(out.view()), reference_dft(dense, {33, 128}, {1}, -1)), tolerance(f32, 128));
}

TEST(FftStaging, FunctionFormUsesTheLimitInItsPlanKey) {
  CUPLAN_REQUIRE_GPU();
  auto host = HostArray<std::complex<double>>::random({21, 16});
  const auto expected = reference_dft(host.dense(), {21, 16}, {1}, -1);
  for (std::size_t limit : {std::size_t{0}, 2 * KiB, std::size_t{1} << 20}) {
    Tensor y = fft(host.view(), {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = limit});
    EXPECT_LT(relative_error(to_dense(y.view()), expected), 1e-12) << "limit " << limit;
  }
  // Too small for the same shape: the cached plans of the other limits must not hide the error.
  EXPECT_THROW(fft(host.view(), {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = 100}),
               NotSupported);
}

TEST(FftStaging, OneTransformAboveTheLimitIsNotSupportedNamingTheMinimum) {
  CUPLAN_REQUIRE_GPU();
  auto host = HostArray<std::complex<float>>::random({4, 1024});
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = 10000});
  expect_throw_naming<NotSupported>([&] { f.plan(); }, {"device_memory_limit", "10000", "minimum"});
}

TEST(FftStaging, LimitThatCannotHoldTheWorkspaceIsInvalidNamingTheSmallest) {
  CUPLAN_REQUIRE_GPU();
  // A prime length (Bluestein) needs a cuFFT workspace: the limit holds the data of one transform but not that.
  const std::int64_t n = 65537;
  auto host = HostArray<std::complex<float>>::random({2, n});
  const std::size_t transform_bytes = static_cast<std::size_t>(n) * 8 * 2;
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = transform_bytes});
  expect_throw_naming<InvalidArgument>([&] { f.plan(); }, {"device_memory_limit", "smallest limit that works"});
}

// A pinned host operand of 64 x 256 c64, zeroed, that a stream fills late: after a long spin it copies fresh random
// values in from the device. A staged call that did not wait for that stream would transform the zeros.
struct LateHostOperand {
  const Shape shape{64, 256};
  const std::vector<std::complex<float>> values = random_vector<std::complex<float>>(64 * 256);
  const std::size_t bytes = values.size() * sizeof values[0];
  Tensor source = Tensor::empty(shape, c64, Device::cuda(0));
  Tensor x = Tensor::empty(shape, c64, Device::cpu(), {}, HostMemory::pinned);

  LateHostOperand() {
    copy(TensorView(const_cast<std::complex<float>*>(values.data()), shape), source.view());
    std::memset(x.data(), 0, bytes);
  }
  void write_late(cudaStream_t stream) {
    spin_kernel<<<1, 1, 0, stream>>>(cycles_for_ms(100));
    CUPLAN_TEST_CUDA(cudaMemcpyAsync(x.data(), source.data(), bytes, cudaMemcpyDeviceToHost, stream));
  }
  // The error of a transform of x along axis 1 against the float64 reference of the values.
  double error_of(const Tensor& y) const {
    const std::vector<cd> dense(values.begin(), values.end());
    return relative_error(to_dense(y.view()), reference_dft(dense, {64, 256}, {1}, -1));
  }
};

// The operand is written by the caller's stream after a long spin: the staged call must read it only after that.
TEST(FftStaging, BusyCallerStreamIsHonoured) {
  CUPLAN_REQUIRE_GPU();
  LateHostOperand operand;
  Stream s;
  FFT f(operand.x, {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = 32 * KiB});
  f.plan(s);
  operand.write_late(s.native());
  Tensor y = f.execute({.stream = s});
  EXPECT_LT(operand.error_of(y), tolerance(f32, 256));
}

TEST(FftStaging, AfterEventsAreHonoured) {
  CUPLAN_REQUIRE_GPU();
  LateHostOperand operand;
  Stream producer, consumer;
  FFT f(operand.x, {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = 32 * KiB});
  f.plan(consumer);
  operand.write_late(producer.native());
  Event written = producer.record();
  Tensor y = f.execute({.stream = consumer, .after = {written}});
  EXPECT_LT(operand.error_of(y), tolerance(f32, 256));
}

TEST(FftStaging, ReleaseWorkspaceGivesTheStagingMemoryBackAndTheObjectStaysUsable) {
  CUPLAN_REQUIRE_GPU();
  auto host = HostArray<std::complex<float>>::random({40, 64});
  const auto expected = reference_dft(host.dense(), {40, 64}, {1}, -1);
  FFT f(host.view(), {.axes = {1}, .execution = Execution::cuda(), .device_memory_limit = 16 * KiB});
  f.plan();
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  const std::size_t before = detail::pool_statistics(0).used;
  Tensor y = f.execute({.release_workspace = true});
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(detail::pool_statistics(0).used, before);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(f32, 64));
  Tensor again = f.execute();
  EXPECT_LT(relative_error(to_dense(again.view()), expected), tolerance(f32, 64));
}

TEST(FftStaging, ANewHostResultIsPinnedAndTheNextCallReusesItsBlock) {
  CUPLAN_REQUIRE_GPU();
  // 256 x 1024 c64: a 2 MiB result, above the smallest pinned result (1 MiB).
  const std::vector<std::int64_t> shape{256, 1024};
  auto host = HostArray<std::complex<float>>::random(shape);
  FFT f(host.view(), {.axes = {-1}, .execution = Execution::cuda()});
  f.plan();
  expect_pinned_results_reused([&] { return f.execute(); },
                               [&](const Tensor& y, int call) {
                                 EXPECT_EQ(y.device(), Device::cpu());
                                 const auto expected = reference_dft(host.dense(), shape, {1}, -1);
                                 EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(c64, 1024))
                                     << "call " << call;
                               });
  // The function form takes the same path.
  Tensor z = fft(host.view(), {.axes = {-1}, .execution = Execution::cuda()});
  EXPECT_EQ(z.memory_space(), MemorySpace::host_pinned);
}

TEST(FftStaging, ASmallHostResultStaysPageable) {
  CUPLAN_REQUIRE_GPU();
  auto host = HostArray<std::complex<float>>::random({64, 64});
  FFT f(host.view(), {.execution = Execution::cuda()});
  f.plan();
  Tensor y = f.execute();
  EXPECT_EQ(y.memory_space(), MemorySpace::host_pageable);
  const auto expected = reference_dft(host.dense(), {64, 64}, {0, 1}, -1);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(c64, 64 * 64));
}

}  // namespace
}  // namespace cuplan::testing
