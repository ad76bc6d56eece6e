// SPDX-License-Identifier: Apache-2.0
// fmt formatters of the value types and errors.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cuplan/format.hpp"

namespace cuplan {
namespace {

TEST(Format, ValueTypes) {
  EXPECT_EQ(fmt::format("{}", c64), "c64");
  EXPECT_EQ(fmt::format("{:>6}", f32), "   f32");
  EXPECT_EQ(fmt::format("{}", Device::cpu()), "cpu");
  EXPECT_EQ(fmt::format("{}", Device::cuda(3)), "cuda:3");
  EXPECT_EQ(fmt::format("{:<8}|", Device::cuda(0)), "cuda:0  |");
  EXPECT_EQ(fmt::format("{}", MemorySpace::host_pinned), "host_pinned");
  EXPECT_EQ(fmt::format("{}", MemorySpace::managed), "managed");
  EXPECT_EQ(fmt::format("{}", Dims{64, 256}), "[64, 256]");
  EXPECT_EQ(fmt::format("{}", Dims{}), "[]");
  EXPECT_EQ(fmt::format("{}", Dims{-1}), "[-1]");
}

TEST(Format, EnumsByName) {
  EXPECT_EQ(fmt::format("{}", Direction::inverse), "inverse");
  EXPECT_EQ(fmt::format("{:>8}|", Direction::forward), " forward|");
  EXPECT_EQ(fmt::format("{}", Normalization::ortho), "ortho (1/sqrt(N))");  // the name describe() uses
  EXPECT_EQ(fmt::format("{}", Parity::odd), "odd");
  EXPECT_EQ(fmt::format("{}", ResultLayout::optimized), "optimized");
  EXPECT_EQ(fmt::format("{}", Planning::patient), "patient");
  EXPECT_EQ(fmt::format("{}", Blocking::always), "always");
  EXPECT_EQ(fmt::format("{}", LogLevel::warning), "warning");
  EXPECT_EQ(fmt::format("{}", FFTType::r2c), "R2C");
  EXPECT_EQ(fmt::format("{}", Epilog::gelu_bias), "gelu_bias");
  EXPECT_EQ(fmt::format("{}", Compute::tf32), "tf32");
  EXPECT_EQ(fmt::format("{}", HostMemory::pinned), "pinned");
  EXPECT_EQ(fmt::format("{}", MatmulOperand::epilog_aux), "epilog_aux");
  EXPECT_EQ(fmt::format("{}", DTypeCode::c128), "c128");
  EXPECT_EQ(fmt::format("{}", FFTRoute::cufft), "cufft");
  EXPECT_EQ(fmt::format("{}", ConvolutionMode::valid), "valid");
  EXPECT_EQ(fmt::format("{}", ConvolutionRoute::separate), "separate");
  EXPECT_EQ(fmt::format("{}", static_cast<ConvolutionMode>(9)), "?");
}

// A value outside an enumeration (a cast makes one) is "?" in every to_string, never another enumerator's name.
template <class Enum>
std::string_view name_of_out_of_range() {
  return to_string(static_cast<Enum>(static_cast<std::underlying_type_t<Enum>>(99)));
}

TEST(Format, ValuesOutsideAnEnumerationAreNamedQuestionMark) {
  static_assert(to_string(PlanningMode::background) == "background");
  static_assert(to_string(Execution::Kind::cpu) == "cpu");
  EXPECT_EQ(name_of_out_of_range<MemorySpace>(), "?");
  EXPECT_EQ(name_of_out_of_range<Parity>(), "?");
  EXPECT_EQ(name_of_out_of_range<HostMemory>(), "?");
  EXPECT_EQ(name_of_out_of_range<MatmulOperand>(), "?");
  EXPECT_EQ(name_of_out_of_range<ResultLayout>(), "?");
  EXPECT_EQ(name_of_out_of_range<Planning>(), "?");
  EXPECT_EQ(name_of_out_of_range<WorkAreaPolicy>(), "?");
  EXPECT_EQ(name_of_out_of_range<Blocking>(), "?");
  EXPECT_EQ(name_of_out_of_range<PlanningMode>(), "?");
  EXPECT_EQ(name_of_out_of_range<LogLevel>(), "?");
  EXPECT_EQ(name_of_out_of_range<Execution::Kind>(), "?");
  EXPECT_EQ(name_of_out_of_range<Direction>(), "?");
  EXPECT_EQ(name_of_out_of_range<FFTType>(), "?");
  EXPECT_EQ(name_of_out_of_range<FFTRoute>(), "?");
  EXPECT_EQ(fmt::format("{}", static_cast<Blocking>(7)), "?");
}

TEST(Format, Statistics) {
  EXPECT_EQ(fmt::format("{}", PlanCacheStats{.hits = 5, .misses = 1, .evictions = 0, .size = 1, .capacity = 64}),
            "plan cache: 5 hits, 1 misses, 0 evictions, 1 plans (capacity 64), 0 B held");
  EXPECT_EQ(fmt::format("{}", PlanCacheStats{.hits = 5,
                                             .misses = 1,
                                             .evictions = 0,
                                             .size = 1,
                                             .capacity = 64,
                                             .bytes = 512,
                                             .byte_limit = 1024,
                                             .work_areas_released = 3}),
            "plan cache: 5 hits, 1 misses, 0 evictions, 1 plans (capacity 64), 512 B held (limit 1024 B, 3 idle plans' "
            "memory released)");
  memory::Stats stats;
  stats.bytes_in_use = 1024;
  stats.peak_bytes = 4096;
  stats.allocations = 3;
  stats.deallocations = 2;
  EXPECT_EQ(fmt::format("{}", stats),
            "device memory: 1024 B in use, peak 4096 B, 3 allocations, 2 deallocations, pool reserves 0 B");
  EXPECT_EQ(fmt::format("{}", EventRef()), "EventRef(0x0)");
}

TEST(Format, ExecutionStreamsEventsAlgorithms) {
  EXPECT_EQ(fmt::format("{}", Execution::automatic()), "automatic");
  EXPECT_EQ(fmt::format("{}", Execution::cuda()), "cuda");
  EXPECT_EQ(fmt::format("{}", Execution::cuda(1)), "cuda:1");
  EXPECT_EQ(fmt::format("{}", Execution::cpu()), "cpu");
  EXPECT_EQ(fmt::format("{}", Execution::cpu(4)), "cpu(threads=4)");
  EXPECT_EQ(fmt::format("{}", StreamRef(cudaStreamLegacy)), "StreamRef(legacy default)");
  EXPECT_EQ(fmt::format("{}", StreamRef(cudaStreamPerThread)), "StreamRef(per-thread default)");
  EXPECT_EQ(fmt::format("{}", StreamRef()), "StreamRef(default)");
  // A stream of the machine: a CUDA stream with a GPU, a host stream without one.
  const Stream s;
  const std::string text = fmt::format("{}", s);
  EXPECT_EQ(text.rfind("Stream(0x", 0), 0U) << text;
  EXPECT_NE(text.find(cuda_available() ? ", cuda:" : ", cpu, owning)"), std::string::npos) << text;
  Event e;
  EXPECT_EQ(fmt::format("{}", e), "Event(not recorded, no timing)");
  e.record(s);
  EXPECT_EQ(fmt::format("{}", e), "Event(recorded, no timing)");
  const Event moved = std::move(e);
  EXPECT_EQ(fmt::format("{}", e), "Event(moved-from)");  // NOLINT(bugprone-use-after-move)
  AlgorithmInfo info{.index = 1, .algorithm_id = 21, .tile = 18, .stages = 8, .split_k = 2, .workspace_bytes = 1024};
  EXPECT_EQ(fmt::format("{}", info), "algorithm 1 (id 21, tile 18, stages 8, split-k 2, workspace 1024 B)");
  info.measured_ms = 0.25F;
  EXPECT_EQ(fmt::format("{}", info), "algorithm 1 (id 21, tile 18, stages 8, split-k 2, workspace 1024 B, 0.2500 ms)");
}

TEST(Format, TensorViewAndTensor) {
  std::vector<std::complex<float>> host(64 * 4);
  TensorView view(host.data(), {64, 4}, Strides{1, 64});
  EXPECT_EQ(fmt::format("{}", view),
            "TensorView(c64, shape=[64, 4], strides=[1, 64], device=cpu, memory=host_pageable)");
  Tensor owned = Tensor::empty({2, 3}, f64);
  EXPECT_EQ(fmt::format("{}", owned),
            "Tensor(f64, shape=[2, 3], strides=[3, 1], device=cpu, memory=host_pageable, owning)");
  EXPECT_EQ(fmt::format("{}", Tensor::wrap(view)),
            "Tensor(c64, shape=[64, 4], strides=[1, 64], device=cpu, memory=host_pageable, wrapping)");
}

// A log line of an object in any state prints that state; it never throws (a moved-from Stream's other members,
// a moved-from or freed FFT's and Matmul's describe() throw StateError).
TEST(Format, MovedFromFreedAndUndefinedObjectsPrintTheirState) {
  Stream s;
  const Stream taken = std::move(s);
  EXPECT_EQ(fmt::format("{}", s), "Stream(moved-from)");  // NOLINT(bugprone-use-after-move)
  EXPECT_THROW((void)StreamRef(s), StateError);           // the documented contract: no ref to no stream
  EXPECT_NE(fmt::format("{}", taken), "Stream(moved-from)");
  EXPECT_EQ(fmt::format("{}", Tensor()), "Tensor(undefined)");

  Tensor x = Tensor::empty({8}, c64);
  FFT fft(x, FFTOptions{.execution = Execution::cpu()});
  EXPECT_EQ(fft.state(), "live");
  EXPECT_EQ(fmt::format("{}", fft), fft.describe());
  FFT fft_taken = std::move(fft);
  EXPECT_EQ(fft.state(), "moved-from");  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(fmt::format("{}", fft), "FFT(moved-from)");
  EXPECT_THROW((void)fft.describe(), StateError);
  fft_taken.free();
  EXPECT_EQ(fft_taken.state(), "freed");
  EXPECT_EQ(fmt::format("{}", fft_taken), "FFT(freed)");
  EXPECT_THROW((void)fft_taken.describe(), StateError);

  Tensor a = Tensor::empty({4, 3}, f32), b = Tensor::empty({3, 2}, f32);
  Matmul mm(a, b, MatmulOptions{.execution = Execution::cpu()});
  EXPECT_EQ(mm.state(), "live");
  EXPECT_EQ(fmt::format("{}", mm), mm.describe());
  Matmul mm_taken = std::move(mm);
  EXPECT_EQ(fmt::format("{}", mm), "Matmul(moved-from)");  // NOLINT(bugprone-use-after-move)
  mm_taken.free();
  EXPECT_EQ(fmt::format("{}", mm_taken), "Matmul(freed)");
  EXPECT_THROW((void)mm_taken.describe(), StateError);

  // Convolution has the same state() and formatter as the other planned operations.
  Tensor signal = Tensor::empty({2, 16}, f32), kernel = Tensor::empty({1, 3}, f32);
  Convolution conv(signal, kernel, ConvolutionOptions{.execution = Execution::cpu()});
  EXPECT_EQ(conv.state(), "live");
  EXPECT_EQ(fmt::format("{}", conv), conv.describe());
  Convolution conv_taken = std::move(conv);
  EXPECT_EQ(conv.state(), "moved-from");  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(fmt::format("{}", conv), "Convolution(moved-from)");
  conv_taken.free();
  EXPECT_EQ(conv_taken.state(), "freed");
  EXPECT_EQ(fmt::format("{}", conv_taken), "Convolution(freed)");
  EXPECT_THROW((void)conv_taken.describe(), StateError);
}

TEST(Format, ErrorsNameTheirKind) {
  EXPECT_EQ(fmt::format("{}", InvalidArgument("x: bad")), "InvalidArgument: x: bad");
  EXPECT_EQ(fmt::format("{}", NotSupported("no")), "NotSupported: no");
  EXPECT_EQ(fmt::format("{}", OutOfMemory("full")), "OutOfMemory: full");
  const CudaError cuda("CUDA runtime", "cudaMalloc(&p, n)", 2, "cudaErrorMemoryAllocation", "out of memory");
  EXPECT_EQ(fmt::format("{}", cuda), "CudaError: out of memory");
  // Through a base reference the most derived kind is still named.
  const Error& base = cuda;
  EXPECT_EQ(fmt::format("{}", base), "CudaError: out of memory");
  const Error& state = StateError("FFT.execute: called after free()");
  EXPECT_EQ(fmt::format("{}", state), "StateError: FFT.execute: called after free()");
}

}  // namespace
}  // namespace cuplan
