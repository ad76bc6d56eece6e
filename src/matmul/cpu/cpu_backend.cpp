// SPDX-License-Identifier: Apache-2.0
#include "matmul/cpu/cpu_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <type_traits>

#include "base/error_context.hpp"
#include "base/host_array.hpp"
#include "cuplan/errors.hpp"
#include "matmul/cpu/blas_threads.hpp"
#include "matmul/cpu/blas_vendor.hpp"
#include "matmul/cpu/epilog_math.hpp"

namespace cuplan::detail::mm {
namespace {

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};

/// Reads element `index` of an array of dtype `t` as the working type W (f16/bf16 widen to float).
template <class W>
W load(const void* base, DType t, std::int64_t index) {
  switch (t.code()) {
    case DTypeCode::f16:
      return W(static_cast<float>(static_cast<const cuplan::half*>(base)[index]));
    case DTypeCode::bf16:
      return W(static_cast<float>(static_cast<const cuplan::bfloat16*>(base)[index]));
    case DTypeCode::f32:
      return W(static_cast<const float*>(base)[index]);
    case DTypeCode::f64:
      return W(static_cast<const double*>(base)[index]);
    case DTypeCode::i8:
      return W(static_cast<const std::int8_t*>(base)[index]);
    default:
      if constexpr (is_complex<W>::value) {
        if (t == c64) return W(static_cast<const std::complex<float>*>(base)[index]);
        if (t == c128) return W(static_cast<const std::complex<double>*>(base)[index]);
      }
  }
  throw NotSupported(fmt::format("matmul on the CPU: dtype {} cannot be read here", t.name()));
}

template <class W>
void store(void* base, DType t, std::int64_t index, W value) {
  if constexpr (is_complex<W>::value) {
    if (t == c64)
      static_cast<std::complex<float>*>(base)[index] = std::complex<float>(value);
    else
      static_cast<std::complex<double>*>(base)[index] = std::complex<double>(value);
  } else {
    switch (t.code()) {
      case DTypeCode::f16:
        static_cast<cuplan::half*>(base)[index] = cuplan::half(static_cast<float>(value));
        break;
      case DTypeCode::bf16:
        static_cast<cuplan::bfloat16*>(base)[index] = cuplan::bfloat16(static_cast<float>(value));
        break;
      case DTypeCode::f32:
        static_cast<float*>(base)[index] = static_cast<float>(value);
        break;
      case DTypeCode::f64:
        static_cast<double*>(base)[index] = static_cast<double>(value);
        break;
      default:
        throw NotSupported(fmt::format("matmul on the CPU: dtype {} cannot be written here", t.name()));
    }
  }
}

/// Offset of flat batch entry `batch` plus (row, col) under strides against batch_shape + (rows, cols).
std::int64_t offset_of(const Shape& batch_shape, const Strides& strides, std::int64_t batch, std::int64_t row,
                       std::int64_t col) {
  std::int64_t off = 0;
  for (int i = batch_shape.size() - 1; i >= 0; --i) {
    off += (batch % batch_shape[i]) * strides[i];
    batch /= batch_shape[i];
  }
  const int nb = batch_shape.size();
  return off + row * strides[nb] + col * strides[nb + 1];
}

template <class W>
void gemm(bool a_trans, bool a_conj, bool b_trans, bool b_conj, std::int64_t m, std::int64_t n, std::int64_t k, W alpha,
          const W* a, std::int64_t lda, const W* b, std::int64_t ldb, W* d, std::int64_t ldd) {
  auto op = [](bool trans, bool conj) { return trans ? (conj ? CblasConjTrans : CblasTrans) : CblasNoTrans; };
  const auto ta = op(a_trans, a_conj), tb = op(b_trans, b_conj);
  const auto M = static_cast<blas_int>(m), N = static_cast<blas_int>(n), K = static_cast<blas_int>(k);
  const auto lda_ = static_cast<blas_int>(std::max<std::int64_t>(lda, 1));
  const auto ldb_ = static_cast<blas_int>(std::max<std::int64_t>(ldb, 1));
  const auto ldd_ = static_cast<blas_int>(std::max<std::int64_t>(ldd, 1));
  if constexpr (std::is_same_v<W, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a, lda_, b, ldb_, 0.0f, d, ldd_);
  } else if constexpr (std::is_same_v<W, double>) {
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a, lda_, b, ldb_, 0.0, d, ldd_);
  } else if constexpr (std::is_same_v<W, std::complex<float>>) {
    const W zero{};
    cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &alpha, a, lda_, b, ldb_, &zero, d, ldd_);
  } else {
    const W zero{};
    cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &alpha, a, lda_, b, ldb_, &zero, d, ldd_);
  }
}

/// An operand ready for cblas: a typed pointer with layout, either the caller's memory or a dense copy.
template <class W>
struct GemmOperand {
  HostArray<W> copy;
  const W* data = nullptr;
  bool trans = false, conj = false;
  std::int64_t ld = 1, batch_stride = 0;
};

template <class W>
GemmOperand<W> prepare(const TensorView& view, const MatrixLayout& layout, const Problem& p, bool conj,
                       bool vector_is_row) {
  GemmOperand<W> g;
  const DType storage = dtype_of<W>;
  // cblas has no conjugate without transpose: a row-major operand to conjugate is copied (conjugated) too.
  const bool direct = !layout.needs_copy && view.dtype() == storage && !(conj && layout.row_major);
  if (direct) {
    g.data = view.data<const W>();
    g.trans = !layout.row_major;
    g.conj = conj;
    g.ld = layout.ld;
    g.batch_stride = layout.batch_stride;
    return g;
  }
  const Strides strides = matrix_operand_strides(view, p.batch_shape, vector_is_row);
  const std::int64_t batches = layout.needs_copy || layout.batch_stride != 0 ? p.batch_count : 1;
  const std::int64_t rows = layout.rows, cols = layout.cols;
  g.copy = HostArray<W>(static_cast<std::size_t>(batches * rows * cols), "matmul: operand copy for BLAS");
  for (std::int64_t bi = 0; bi < batches; ++bi)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        W v = load<W>(view.data(), view.dtype(), offset_of(p.batch_shape, strides, bi, r, c));
        if constexpr (is_complex<W>::value) {
          if (conj) v = std::conj(v);
        }
        g.copy[static_cast<std::size_t>((bi * rows + r) * cols + c)] = v;
      }
  g.data = g.copy.data();
  g.ld = cols;
  g.batch_stride = batches > 1 ? rows * cols : 0;
  return g;
}

template <class W>
void run(const Problem& p, const CpuOperands& in, std::complex<double> alpha, std::complex<double> beta,
         const CpuOutputs& out) {
  const std::int64_t m = p.m, n = p.n, k = p.k, mn = m * n;
  GemmOperand<W> a = prepare<W>(in.a, p.a, p, p.conjugate_a, true);
  GemmOperand<W> b = prepare<W>(in.b, p.b, p, p.conjugate_b, false);
  // gemm writes a dense row-major D; a column-major D (native form) or another dtype goes through a scratch copy.
  const bool direct_d = p.result_dtype == dtype_of<W> && p.swapped;
  HostArray<W> scratch;
  if (!direct_d)
    scratch = HostArray<W>(static_cast<std::size_t>(p.batch_count * mn), "matmul: result scratch for BLAS");
  W* d = direct_d ? static_cast<W*>(out.d) : scratch.data();
  W alpha_w, beta_w;
  if constexpr (is_complex<W>::value) {
    alpha_w = W(alpha);
    beta_w = W(beta);
  } else {
    alpha_w = W(alpha.real());
    beta_w = W(beta.real());
  }
  CUPLAN_LIBRARY_FAULT_POINT("BLAS", "cblas_?gemm");
  for (std::int64_t bi = 0; bi < p.batch_count && mn > 0; ++bi)
    gemm<W>(a.trans, a.conj, b.trans, b.conj, m, n, k, alpha_w, a.data + bi * a.batch_stride, a.ld,
            b.data + bi * b.batch_stride, b.ld, d + bi * mn, n);

  if (p.has_c && beta_w != W(0)) {
    for (std::int64_t bi = 0; bi < p.batch_count; ++bi)
      for (std::int64_t r = 0; r < m; ++r)
        for (std::int64_t c = 0; c < n; ++c)
          d[bi * mn + r * n + c] +=
              beta_w * load<W>(in.c->data(), in.c->dtype(), offset_of(p.batch_shape, p.c_strides, bi, r, c));
  }

  if constexpr (!is_complex<W>::value) {
    const EpilogTraits t = epilog_traits(p.epilog);
    const bool elementwise = p.has_bias || t.relu || t.gelu || t.aux_output || t.aux_input || t.bias_gradient;
    for (std::int64_t bi = 0; bi < p.batch_count && elementwise; ++bi) {
      for (std::int64_t r = 0; r < m; ++r) {
        double row_sum = 0;
        const W bias = p.has_bias ? load<W>(in.bias->data(), in.bias->dtype(), bi * p.bias_batch_stride + r) : W(0);
        for (std::int64_t c = 0; c < n; ++c) {
          const std::int64_t i = bi * mn + r * n + c;
          W x = d[i] + bias;
          if (t.aux_output) {
            if (t.relu)
              static_cast<std::int8_t*>(out.aux)[i] = x > W(0) ? 1 : 0;
            else
              store<W>(out.aux, p.aux_dtype, i, x);
          }
          if (t.aux_input) {
            const W aux = load<W>(in.epilog_aux->data(), in.epilog_aux->dtype(), i);
            x = t.relu ? (aux != W(0) ? x : W(0)) : x * gelu_derivative(aux);
          } else if (t.relu) {
            x = std::max(x, W(0));
          } else if (t.gelu) {
            x = gelu(x);
          }
          d[i] = x;
          row_sum += static_cast<double>(x);
        }
        if (t.aux_input && t.bias_gradient) store<W>(out.bias_gradient, p.result_dtype, bi * m + r, W(row_sum));
      }
    }
    // Bias gradients from the inputs: sums over k of op(A) (length M) or of op(B) (length N).
    if (p.epilog == Epilog::bgrada || p.epilog == Epilog::bgradb) {
      const bool from_a = p.epilog == Epilog::bgrada;
      const TensorView& v = from_a ? in.a : in.b;
      const Strides s = matrix_operand_strides(v, p.batch_shape, from_a);
      const std::int64_t len = from_a ? m : n;
      for (std::int64_t bi = 0; bi < p.batch_count; ++bi)
        for (std::int64_t j = 0; j < len; ++j) {
          double sum = 0;
          for (std::int64_t kk = 0; kk < k; ++kk)
            sum += static_cast<double>(
                load<W>(v.data(), v.dtype(),
                        from_a ? offset_of(p.batch_shape, s, bi, j, kk) : offset_of(p.batch_shape, s, bi, kk, j)));
          store<W>(out.bias_gradient, p.result_dtype, bi * len + j, W(sum));
        }
    }
  }
  if (!direct_d)
    for (std::int64_t bi = 0; bi < p.batch_count; ++bi)
      for (std::int64_t r = 0; r < m; ++r)
        for (std::int64_t c = 0; c < n; ++c)
          store<W>(out.d, p.result_dtype, offset_of(p.batch_shape, p.d_strides, bi, r, c), d[bi * mn + r * n + c]);
}

}  // namespace

const char* blas_name() noexcept {
  return blas_vendor;
}

void check_cpu_support(const Problem& p, const char* who) {
  if (p.a_dtype.is_fp8() || p.b_dtype.is_fp8())
    throw NotSupported(
        fmt::format("{}: fp8 operands ({} x {}) need CUDA execution on a GPU with compute capability "
                    ">= 8.9; this product runs on the CPU",
                    who, p.a_dtype.name(), p.b_dtype.name()));
  if (p.compute == Compute::f16)
    throw NotSupported(
        fmt::format("{}: compute f16 (f16 accumulation) needs CUDA execution; the CPU accumulates f16 "
                    "products in f32 with compute automatic",
                    who));
  const std::int64_t limit = std::numeric_limits<blas_int>::max();
  if (p.m > limit || p.n > limit || p.k > limit || p.a.ld > limit || p.b.ld > limit)
    throw NotSupported(fmt::format("{}: extents M = {}, N = {}, K = {} exceed the CPU BLAS integer range {}", who, p.m,
                                   p.n, p.k, limit));
}

void cpu_matmul(const Problem& p, const CpuOperands& in, std::complex<double> alpha, std::complex<double> beta,
                const CpuOutputs& out, int threads) {
  // The BLAS thread count is process-wide: this call's count, serialised against calls that need another one,
  // and the process's own count put back afterwards (blas_threads.hpp).
  const BlasThreads thread_count(threads);
  switch (p.a_dtype.code()) {
    case DTypeCode::f16:
    case DTypeCode::bf16:
    case DTypeCode::f32:
      run<float>(p, in, alpha, beta, out);
      break;
    case DTypeCode::f64:
      run<double>(p, in, alpha, beta, out);
      break;
    case DTypeCode::c64:
      run<std::complex<float>>(p, in, alpha, beta, out);
      break;
    case DTypeCode::c128:
      run<std::complex<double>>(p, in, alpha, beta, out);
      break;
    default:
      check_cpu_support(p, "matmul");
      throw NotSupported("matmul on the CPU: unsupported operand dtype");
  }
}

}  // namespace cuplan::detail::mm
