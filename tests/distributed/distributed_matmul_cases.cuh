// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the DistributedMatmul tests share: global matrices of random values rounded to the operand dtype, their
// float64 reference product, the cases (extents, dtype, layouts, algorithm, epilog, beta, exchange), scattering a
// global matrix into a rank's local array and gathering it back, and one rank's operands on its GPU.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuplan/distributed_matmul.hpp"
#include "distributed/rank_harness.hpp"

namespace cuplan::testing::distributed_matmul {

using cuplan::Communicator;
using cuplan::DistributedMatmul;
using cuplan::DistributedMatmulAlgorithm;
using cuplan::DistributedMatmulOptions;
using cuplan::DType;
using cuplan::Epilog;
using cuplan::MatrixDistribution;
using cuplan::MatrixLayout;
using cplx = std::complex<double>;

// One element of `dtype` from / to a complex double (imaginary part dropped for real types).
inline void store(DType t, cplx v, unsigned char* p) {
  switch (t.code()) {
    case cuplan::DTypeCode::f16: {
      const __half h = __double2half(v.real());
      std::memcpy(p, &h, 2);
      break;
    }
    case cuplan::DTypeCode::bf16: {
      const __nv_bfloat16 h = __double2bfloat16(v.real());
      std::memcpy(p, &h, 2);
      break;
    }
    case cuplan::DTypeCode::f32: {
      const float f = static_cast<float>(v.real());
      std::memcpy(p, &f, 4);
      break;
    }
    case cuplan::DTypeCode::f64:
      std::memcpy(p, &v, 8);
      break;
    case cuplan::DTypeCode::c64: {
      const std::complex<float> c(v);
      std::memcpy(p, &c, 8);
      break;
    }
    default:
      std::memcpy(p, &v, 16);
  }
}
inline cplx load(DType t, const unsigned char* p) {
  switch (t.code()) {
    case cuplan::DTypeCode::f16: {
      __half h;
      std::memcpy(&h, p, 2);
      return __half2float(h);
    }
    case cuplan::DTypeCode::bf16: {
      __nv_bfloat16 h;
      std::memcpy(&h, p, 2);
      return __bfloat162float(h);
    }
    case cuplan::DTypeCode::f32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case cuplan::DTypeCode::f64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case cuplan::DTypeCode::c64: {
      std::complex<float> c;
      std::memcpy(&c, p, 8);
      return cplx(c);
    }
    default: {
      cplx c;
      std::memcpy(&c, p, 16);
      return c;
    }
  }
}

// A global row-major matrix of random values, rounded to `dtype` (so that the reference sees what the GPUs see).
struct Matrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<cplx> v;
  cplx at(std::int64_t i, std::int64_t j) const { return v[static_cast<std::size_t>(i * cols + j)]; }
};
inline Matrix random_matrix(std::int64_t rows, std::int64_t cols, DType dtype, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Matrix m{rows, cols, std::vector<cplx>(static_cast<std::size_t>(rows * cols))};
  unsigned char buf[16];
  for (cplx& x : m.v) {
    store(dtype, cplx(u(rng), dtype.is_complex() ? u(rng) : 0.0), buf);
    x = load(dtype, buf);
  }
  return m;
}

struct Case {
  std::int64_t m = 37, n = 29, k = 23;
  DType dtype = cuplan::f64;
  bool ta = false, tb = false;
  MatrixLayout la{}, lb{}, ld{};
  DistributedMatmulAlgorithm algorithm = DistributedMatmulAlgorithm::automatic;
  Epilog epilog = Epilog::none;
  double beta = 0;
  cuplan::ExchangeMethod exchange = cuplan::ExchangeMethod::automatic;
  std::string name;
};

inline MatrixLayout L(MatrixDistribution d, std::array<int, 2> grid = {0, 0},
                      std::array<std::int64_t, 2> block = {0, 0}) {
  return {d, grid, block};
}

inline double tolerance(DType t) {
  return t == cuplan::f64 || t == cuplan::c128  ? 1e-12
         : t == cuplan::f32 || t == cuplan::c64 ? 1e-5
         : t == cuplan::f16                     ? 5e-3
                                                : 3e-2;
}

// cuBLASLt's gelu (folded into a local product) is its own tanh approximation: it agrees with the float64 formula to
// about 1e-10 in f64 (measured 1.1e-10 here), as the single-GPU Matmul tests allow.
inline double tolerance(DType t, Epilog e) {
  const bool gelu = e == Epilog::gelu || e == Epilog::gelu_bias;
  return gelu ? std::max(tolerance(t), 1e-9) : tolerance(t);
}

// The float64 product on the CPU, epilog included.
inline Matrix reference(const Case& c, const Matrix& a, const Matrix& b, const Matrix& cm,
                        const std::vector<cplx>& bias) {
  Matrix d{c.m, c.n, std::vector<cplx>(static_cast<std::size_t>(c.m * c.n))};
  const double alpha = 1.25;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.n; ++j) {
      cplx s = 0;
      for (std::int64_t q = 0; q < c.k; ++q) s += (c.ta ? a.at(q, i) : a.at(i, q)) * (c.tb ? b.at(j, q) : b.at(q, j));
      cplx x = alpha * s + c.beta * cm.at(i, j);
      const Epilog e = c.epilog;
      if (e == Epilog::bias || e == Epilog::relu_bias || e == Epilog::gelu_bias) x += bias[static_cast<std::size_t>(i)];
      if (e == Epilog::relu || e == Epilog::relu_bias) x = std::max(x.real(), 0.0);
      if (e == Epilog::gelu || e == Epilog::gelu_bias) {
        const double r = x.real();
        x = 0.5 * r * (1 + std::tanh(0.7978845608028654 * (r + 0.044715 * r * r * r)));
      }
      d.v[static_cast<std::size_t>(i * c.n + j)] = x;
    }
  return d;
}

// This rank's local array of a global matrix, as the layout places its blocks.
inline std::vector<unsigned char> scatter(const cuplan::DistributedMatrix& local, const Matrix& g, DType t) {
  const std::int64_t cols = local.local_shape[1];
  std::vector<unsigned char> out(static_cast<std::size_t>(local.local_shape[0] * cols) * t.size());
  for (const auto& blk : local.blocks)
    for (std::int64_t i = 0; i < blk.global.extent[0]; ++i)
      for (std::int64_t j = 0; j < blk.global.extent[1]; ++j)
        store(t, g.at(blk.global.offset[0] + i, blk.global.offset[1] + j),
              out.data() +
                  static_cast<std::size_t>((blk.local_offset[0] + i) * cols + blk.local_offset[1] + j) * t.size());
  return out;
}

inline void gather(const cuplan::DistributedMatrix& local, const std::vector<unsigned char>& bytes, DType t,
                   Matrix& g) {
  const std::int64_t cols = local.local_shape[1];
  for (const auto& blk : local.blocks)
    for (std::int64_t i = 0; i < blk.global.extent[0]; ++i)
      for (std::int64_t j = 0; j < blk.global.extent[1]; ++j)
        g.v[static_cast<std::size_t>((blk.global.offset[0] + i) * g.cols + blk.global.offset[1] + j)] = load(
            t, bytes.data() +
                   static_cast<std::size_t>((blk.local_offset[0] + i) * cols + blk.local_offset[1] + j) * t.size());
}

inline cuplan::Tensor upload(const std::vector<unsigned char>& host, const cuplan::Shape& shape, DType t,
                             const Communicator& comm, const cuplan::Stream& s) {
  auto x = cuplan::Tensor::empty(shape, t, comm.device(), s.ref());
  if (!host.empty())
    CUPLAN_HARNESS_CUDA(cudaMemcpyAsync(x.data(), host.data(), host.size(), cudaMemcpyHostToDevice, s));
  return x;
}

struct Operands {
  Matrix a, b, c;
  std::vector<cplx> bias;
};
inline Operands make_operands(const Case& c, unsigned seed) {
  std::mt19937_64 rng(seed);  // the same values in every process
  Operands o;
  o.a = random_matrix(c.ta ? c.k : c.m, c.ta ? c.m : c.k, c.dtype, rng);
  o.b = random_matrix(c.tb ? c.n : c.k, c.tb ? c.k : c.n, c.dtype, rng);
  o.c = random_matrix(c.m, c.n, c.dtype, rng);
  const Matrix bias = random_matrix(c.m, 1, c.dtype, rng);
  o.bias = bias.v;
  return o;
}

inline DistributedMatmulOptions options_of(const Case& c) {
  DistributedMatmulOptions o;
  o.alpha = 1.25;
  o.beta = c.beta;
  o.epilog = c.epilog;
  o.transpose_a = c.ta;
  o.transpose_b = c.tb;
  o.layout_a = c.la;
  o.layout_b = c.lb;
  o.layout_d = c.ld;
  o.algorithm = c.algorithm;
  o.exchange = c.exchange;
  o.min_panels = 3;
  return o;
}

// One rank's A and B of the global `a` and `b`, in the local layouts of `blocks`, uploaded on `s`.
struct RankOperands {
  cuplan::Tensor a, b;
};
inline RankOperands upload_operands(const Case& c, const Matrix& a, const Matrix& b,
                                    const cuplan::DistributedMatmulBlocks& blocks, const Communicator& comm,
                                    const cuplan::Stream& s) {
  return {upload(scatter(blocks.a, a, c.dtype), blocks.a.local_shape, c.dtype, comm, s),
          upload(scatter(blocks.b, b, c.dtype), blocks.b.local_shape, c.dtype, comm, s)};
}

}  // namespace cuplan::testing::distributed_matmul
