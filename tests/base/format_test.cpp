// fmt formatters of the value types and errors.

#include <gtest/gtest.h>

#include <fmt/format.h>

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
