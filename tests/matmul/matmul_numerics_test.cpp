// SPDX-License-Identifier: Apache-2.0
// Numerical tests of Matmul against a float64 reference, parameterised over the execution space: the CPU here, and
// CUDA (host and device operands) where a GPU is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>

#include "matmul/matmul_reference.hpp"

namespace cuplan::testing {
namespace {

enum class Space { cpu, cuda_host, cuda_device };

struct Case {
  Shape batch_a{}, batch_b{};
  std::int64_t m = 0, n = 0, k = 0;
  bool a_row_major = true, b_row_major = true;
  std::int64_t pad = 0;
  bool with_c = false;
  Shape batch_c{};  ///< C's batch shape (broadcast to D's)
  bool c_row_major = true;
  cd alpha{1.0}, beta{0.0};
  Epilog epilog = Epilog::none;
  bool conj_a = false, conj_b = false;
  Compute compute = Compute::automatic;
  bool use_out = false;  ///< execute into a preallocated, poisoned output of the planned layout
};

/// The result layout rule of docs/matmul.md, restated: D is column-major for epilogs with a bias, an aux output or
/// a gradient, and for products whose conjugated (non-vector) operands are all row-major; row-major otherwise.
bool expect_column_major(const Case& c) {
  const bool plain = c.epilog == Epilog::none || c.epilog == Epilog::relu || c.epilog == Epilog::gelu;
  if (!plain) return true;
  bool votes_native = false, votes_swapped = false;
  if (c.conj_a && c.m > 1 && c.k > 1) (c.a_row_major ? votes_native : votes_swapped) = true;
  if (c.conj_b && c.k > 1 && c.n > 1) (c.b_row_major ? votes_native : votes_swapped) = true;
  return votes_native && !votes_swapped;
}

/// Strides of D (batch..., M, N) in the expected layout.
Strides expected_strides(const Shape& shape, bool column_major) {
  const int nd = shape.size();
  Strides s = Dims::filled(nd, 1);
  const std::int64_t m = shape[nd - 2], n = shape[nd - 1];
  s[nd - 2] = column_major ? 1 : n;
  s[nd - 1] = column_major ? m : 1;
  std::int64_t acc = m * n;
  for (int i = nd - 3; i >= 0; --i) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

class MatmulNumerics : public ::testing::TestWithParam<Space> {
 protected:
  void SetUp() override {
    if (GetParam() != Space::cpu) CUPLAN_REQUIRE_GPU();
  }
  Execution execution() const { return GetParam() == Space::cpu ? Execution::cpu() : Execution::cuda(0); }
  TensorRef place(const TensorView& host) {
    if (GetParam() != Space::cuda_device) return host;
    Tensor dense = Tensor::empty(host.shape(), host.dtype(), Device::cpu());
    copy(host, dense.view());
    // Keep the caller's strides on the device: allocate the same span and copy bytes.
    Tensor t = Tensor::empty({static_cast<std::int64_t>(host.span_bytes())}, i8, Device::cuda(0));
    TensorView strided(t.data(), host.dtype(), host.shape(), host.strides(), Device::cuda(0), MemorySpace::device);
    copy(dense.view(), strided);
    keep_.push_back(t);
    return strided;
  }
  static Tensor host(const Tensor& t) { return t.view().on_host() || t.numel() == 0 ? t : t.to(Device::cpu()); }
  /// An output of the given layout filled with NaN (all bits set), where the space's results live.
  Tensor poisoned_output(const Shape& shape, const Strides& strides, DType dtype) {
    Tensor h = Tensor::empty_strided(shape, strides, dtype, Device::cpu());
    std::memset(h.data(), 0xff, h.view().span_bytes());
    if (GetParam() != Space::cuda_device) return h;
    Tensor d = Tensor::empty_strided(shape, strides, dtype, Device::cuda(0));
    copy(h, d);
    return d;
  }

  template <class T>
  void run(const Case& c, double tol) {
    HostMatrix<T> a(c.batch_a, c.m, c.k, c.a_row_major, c.pad), b(c.batch_b, c.k, c.n, c.b_row_major, c.pad);
    Shape batch = *broadcast(c.batch_a, c.batch_b);
    std::int64_t count = 1;
    for (auto e : batch) count *= e;
    std::optional<HostMatrix<T>> cm;
    if (c.with_c) cm.emplace(c.batch_c, c.m, c.n, c.c_row_major, 0);
    const auto traits = epilog_traits(c.epilog);
    std::vector<T> bias(static_cast<std::size_t>(c.m));
    std::vector<double> bias_v(bias.size());
    for (std::size_t i = 0; i < bias.size(); ++i) {
      bias[i] = from_cd<T>(cd(std::uniform_real_distribution<double>(-1, 1)(rng())));
      bias_v[i] = to_cd(bias[i]).real();
    }
    MatmulOptions o{
        .alpha = c.alpha, .beta = c.beta, .epilog = c.epilog, .compute = c.compute, .execution = execution()};
    if (cm) o.c = place(cm->view());
    if (traits.bias) o.bias = place(TensorView(bias.data(), dtype_of<T>, {c.m}));
    o.conjugate_a = c.conj_a;
    o.conjugate_b = c.conj_b;
    Matmul mm(place(a.view()), place(b.view()), o);
    mm.plan();
    Shape expect_shape = batch;
    expect_shape.push_back(c.m);
    expect_shape.push_back(c.n);
    const bool column_major = expect_column_major(c);
    std::optional<Tensor> out;
    if (c.use_out) out = poisoned_output(expect_shape, expected_strides(expect_shape, column_major), dtype_of<T>);
    // On CUDA the product runs three times with the same operands: the later calls are graph replays, so every
    // device-operand case checks a replayed result too. The previous output is poisoned before each further call
    // (a new result may reuse its memory). Host operands go through staging buffers that keep the last D, so their
    // replays are checked by MatmulReplay.HostOperandsReplayWithTheirNewValues instead.
    const int executes = GetParam() == Space::cpu ? 1 : 3;
    Tensor result;
    for (int i = 0; i < executes; ++i) {
      if (i > 0) {
        const Tensor& previous = out ? *out : result;
        const Tensor poison = poisoned_output(previous.shape(), previous.strides(), previous.dtype());
        copy(poison, previous);
      }
      result = out ? mm.execute({.out = out->view()}) : mm.execute();
    }
    if (out) {
      EXPECT_EQ(result.data(), out->data()) << "execute with `out` returns a tensor over `out`";
    }
    ASSERT_EQ(result.shape(), expect_shape);
    // The planned layout, the same on every backend; values are read through the strides below.
    if (column_major) {
      EXPECT_TRUE(is_column_major_stack(result.view())) << "strides " << ::testing::PrintToString(result.strides());
    } else {
      EXPECT_TRUE(result.view().is_contiguous()) << "strides " << ::testing::PrintToString(result.strides());
    }
    const Tensor d = host(result);
    if (GetParam() == Space::cuda_device) cudaDeviceSynchronize();
    // Reference.
    std::vector<cd> ref(static_cast<std::size_t>(count * c.m * c.n)), pre(ref.size());
    std::vector<double> bgrad(static_cast<std::size_t>(count * (c.epilog == Epilog::bgradb ? c.n : c.m)), 0.0);
    for (std::int64_t bi = 0; bi < count; ++bi)
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
          cd acc = 0;
          for (std::int64_t kk = 0; kk < c.k; ++kk) {
            cd x = a.at(batch, bi, i, kk), y = b.at(batch, bi, kk, j);
            acc += (c.conj_a ? std::conj(x) : x) * (c.conj_b ? std::conj(y) : y);
          }
          cd v = c.alpha * acc + (cm ? c.beta * cm->at(batch, bi, i, j) : cd(0));
          if (traits.bias) v += bias_v[static_cast<std::size_t>(i)];
          const std::size_t idx = static_cast<std::size_t>((bi * c.m + i) * c.n + j);
          pre[idx] = v;
          if (traits.relu) v = std::max(v.real(), 0.0);
          if (traits.gelu) v = ref_gelu(v.real());
          ref[idx] = v;
        }
    if (c.epilog == Epilog::bgrada || c.epilog == Epilog::bgradb) {
      const bool from_a = c.epilog == Epilog::bgrada;
      const std::int64_t len = from_a ? c.m : c.n;
      for (std::int64_t bi = 0; bi < count; ++bi)
        for (std::int64_t j = 0; j < len; ++j)
          for (std::int64_t kk = 0; kk < c.k; ++kk)
            bgrad[static_cast<std::size_t>(bi * len + j)] +=
                (from_a ? a.at(batch, bi, j, kk) : b.at(batch, bi, kk, j)).real();
    }
    const auto got = read_all(d);
    ASSERT_TRUE(all_finite(got)) << "D has unwritten (NaN) or non-finite elements";
    EXPECT_LT(relative_error(got, ref), tol) << "D differs from the float64 reference";
    if (traits.bias_gradient_out) {
      const Tensor g = host(mm.bias_gradient());
      const auto got_g = read_all(g);
      ASSERT_EQ(got_g.size(), bgrad.size());
      EXPECT_LT(relative_error(got_g, bgrad), tol) << "bias gradient differs";
    }
    if (traits.aux_out && GetParam() == Space::cpu) {
      const auto aux = read_all(mm.aux());
      ASSERT_EQ(aux.size(), pre.size());
      if (traits.relu) {
        int wrong = 0;
        for (std::size_t i = 0; i < aux.size(); ++i)
          if (std::abs(pre[i].real()) > 1e-3 && (aux[i].real() != 0) != (pre[i].real() > 0)) ++wrong;
        EXPECT_EQ(wrong, 0) << "relu mask differs";
      } else {
        EXPECT_LT(relative_error(aux, pre), tol) << "gelu aux (pre-activation) differs";
      }
    }
  }

  struct Traits {
    bool bias = false, relu = false, gelu = false, aux_out = false, bias_gradient_out = false;
  };
  static Traits epilog_traits(Epilog e) {
    Traits t;
    t.bias = e == Epilog::bias || e == Epilog::relu_bias || e == Epilog::gelu_bias || e == Epilog::relu_aux_bias ||
             e == Epilog::gelu_aux_bias;
    t.relu = e == Epilog::relu || e == Epilog::relu_bias || e == Epilog::relu_aux || e == Epilog::relu_aux_bias;
    t.gelu = e == Epilog::gelu || e == Epilog::gelu_bias || e == Epilog::gelu_aux || e == Epilog::gelu_aux_bias;
    t.aux_out =
        e == Epilog::relu_aux || e == Epilog::gelu_aux || e == Epilog::relu_aux_bias || e == Epilog::gelu_aux_bias;
    t.bias_gradient_out = e == Epilog::bgrada || e == Epilog::bgradb;
    return t;
  }
  static std::optional<Shape> broadcast(const Shape& x, const Shape& y) {
    const int rank = std::max(x.size(), y.size());
    Shape out = Dims::filled(rank, 1);
    for (int i = 0; i < rank; ++i) {
      const int ix = x.size() - rank + i, iy = y.size() - rank + i;
      const std::int64_t ex = ix >= 0 ? x[ix] : 1, ey = iy >= 0 ? y[iy] : 1;
      out[i] = ex == 1 ? ey : ex;
    }
    return out;
  }
  std::vector<Tensor> keep_;
};

TEST_P(MatmulNumerics, SquareF32) {
  run<float>({.m = 64, .n = 64, .k = 64}, 1e-5);
}
TEST_P(MatmulNumerics, SquareF64) {
  run<double>({.m = 48, .n = 48, .k = 48}, 1e-12);
}
TEST_P(MatmulNumerics, RectangularNotMultipleOf8) {
  run<float>({.m = 37, .n = 53, .k = 19}, 1e-5);
}
TEST_P(MatmulNumerics, SkinnyK) {
  run<float>({.m = 200, .n = 150, .k = 3}, 1e-5);
}
TEST_P(MatmulNumerics, SkinnyMN) {
  run<float>({.m = 1, .n = 300, .k = 257}, 1e-5);
  run<float>({.m = 300, .n = 1, .k = 257}, 1e-5);
}
TEST_P(MatmulNumerics, EveryLayoutCombination) {
  for (bool ar : {true, false})
    for (bool br : {true, false})
      for (std::int64_t pad : {0, 3}) {
        SCOPED_TRACE(::testing::Message() << "a_row_major " << ar << " b_row_major " << br << " pad " << pad);
        run<float>({.m = 33, .n = 17, .k = 29, .a_row_major = ar, .b_row_major = br, .pad = pad}, 1e-5);
        run<double>({.m = 9, .n = 12, .k = 7, .a_row_major = ar, .b_row_major = br, .pad = pad}, 1e-12);
      }
}
TEST_P(MatmulNumerics, BatchedAndBroadcast) {
  run<float>({.batch_a = {3}, .batch_b = {3}, .m = 20, .n = 12, .k = 8}, 1e-5);
  run<float>({.batch_a = {2, 3}, .batch_b = {}, .m = 20, .n = 12, .k = 8}, 1e-5);
  run<float>({.batch_a = {1}, .batch_b = {4}, .m = 5, .n = 6, .k = 7, .b_row_major = false}, 1e-5);
  // Batch shapes (2, 1) x (1, 3): no single batch stride, so an internal copy is made.
  run<double>({.batch_a = {2, 1}, .batch_b = {1, 3}, .m = 4, .n = 5, .k = 6}, 1e-12);
}
TEST_P(MatmulNumerics, AlphaBetaAndC) {
  run<float>({.m = 31, .n = 17, .k = 13, .with_c = true, .alpha = 0.5, .beta = 1.0}, 1e-5);
  run<float>({.m = 31, .n = 17, .k = 13, .with_c = true, .alpha = -2.0, .beta = 0.25}, 1e-5);
  run<double>({.batch_a = {3},
               .batch_b = {3},
               .m = 8,
               .n = 9,
               .k = 10,
               .with_c = true,
               .batch_c = {},
               .alpha = 1.5,
               .beta = -1.0},
              1e-12);
  run<float>({.batch_a = {2}, .batch_b = {2}, .m = 8, .n = 9, .k = 10, .with_c = true, .batch_c = {2}, .beta = 2.0},
             1e-5);
}
TEST_P(MatmulNumerics, Complex) {
  run<std::complex<float>>({.m = 21, .n = 14, .k = 9}, 1e-5);
  run<std::complex<double>>({.m = 21, .n = 14, .k = 9, .with_c = true, .alpha = cd(0.5, -1), .beta = cd(0, 1)}, 1e-12);
}
TEST_P(MatmulNumerics, ComplexConjugate) {
  // Every layout of each conjugated operand: column-major ones are conjugated in the row-major-D form, row-major
  // ones in the native (column-major D) form, and a split (one of each) copies one operand.
  for (bool ar : {true, false})
    for (bool br : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "a_row_major " << ar << " b_row_major " << br);
      run<std::complex<double>>({.m = 11, .n = 7, .k = 5, .a_row_major = ar, .b_row_major = br, .conj_a = true}, 1e-12);
      run<std::complex<float>>({.m = 11, .n = 7, .k = 5, .a_row_major = ar, .b_row_major = br, .conj_b = true}, 1e-5);
      run<std::complex<double>>(
          {.m = 9, .n = 6, .k = 4, .a_row_major = ar, .b_row_major = br, .conj_a = true, .conj_b = true}, 1e-12);
    }
  // Batched, padded, with C: the conjugated operands decide D's layout, C is read in that layout or copied.
  run<std::complex<float>>({.batch_a = {3},
                            .batch_b = {3},
                            .m = 8,
                            .n = 5,
                            .k = 6,
                            .pad = 2,
                            .with_c = true,
                            .batch_c = {3},
                            .alpha = cd(0.5, 1),
                            .beta = cd(1, -0.5),
                            .conj_a = true},
                           1e-5);
}
TEST_P(MatmulNumerics, PreallocatedOutput) {
  run<float>({.m = 33, .n = 17, .k = 29, .use_out = true}, 1e-5);
  run<float>({.batch_a = {2}, .batch_b = {2}, .m = 16, .n = 8, .k = 32, .epilog = Epilog::gelu_bias, .use_out = true},
             1e-5);
  run<std::complex<double>>({.m = 11, .n = 7, .k = 5, .conj_a = true, .use_out = true}, 1e-12);
}
TEST_P(MatmulNumerics, EveryForwardEpilog) {
  for (Epilog e : {Epilog::relu, Epilog::gelu, Epilog::bias, Epilog::relu_bias, Epilog::gelu_bias, Epilog::relu_aux,
                   Epilog::gelu_aux, Epilog::relu_aux_bias, Epilog::gelu_aux_bias}) {
    SCOPED_TRACE(to_string(e));
    run<float>({.m = 40, .n = 24, .k = 16, .epilog = e}, 1e-5);
    run<float>({.batch_a = {2}, .batch_b = {2}, .m = 16, .n = 8, .k = 32, .with_c = true, .beta = 0.5, .epilog = e},
               1e-5);
    // A column-major C matches D's (column-major) layout for these epilogs and is read in place on the GPU.
    run<float>({.batch_a = {2},
                .batch_b = {2},
                .m = 16,
                .n = 8,
                .k = 32,
                .with_c = true,
                .batch_c = {2},
                .c_row_major = false,
                .beta = -1.0,
                .epilog = e},
               1e-5);
  }
}
TEST_P(MatmulNumerics, BiasGradientEpilogs) {
  // Every layout, a broadcast batch and a padded one: on CUDA these run either as cuBLASLt's fused epilog or as the
  // plain product plus cuplan's reduction kernel, whichever the library offers; the results must agree.
  for (Epilog e : {Epilog::bgrada, Epilog::bgradb}) {
    SCOPED_TRACE(to_string(e));
    run<float>({.m = 32, .n = 24, .k = 16, .epilog = e}, 1e-5);
    run<float>({.m = 33, .n = 21, .k = 19, .a_row_major = false, .epilog = e}, 1e-5);
    run<float>({.m = 17, .n = 40, .k = 9, .b_row_major = false, .epilog = e, .use_out = true}, 1e-5);
    run<float>({.batch_a = {3}, .batch_b = {1}, .m = 12, .n = 20, .k = 24, .pad = 3, .epilog = e}, 1e-5);
    run<double>({.batch_a = {2},
                 .batch_b = {2},
                 .m = 9,
                 .n = 7,
                 .k = 30,
                 .a_row_major = false,
                 .b_row_major = false,
                 .epilog = e},
                1e-12);
  }
}
TEST_P(MatmulNumerics, HalfPrecision) {
  run<cuplan::half>({.m = 64, .n = 40, .k = 72}, 5e-3);
  run<cuplan::bfloat16>({.m = 64, .n = 40, .k = 72}, 1e-2);
  run<cuplan::bfloat16>({.m = 64, .n = 40, .k = 72, .epilog = Epilog::gelu_bias}, 1e-2);
}
TEST_P(MatmulNumerics, Tf32) {
  // The CPU computes tf32 requests in f32; on the GPU tf32 errors stay near 3e-4 relative.
  run<float>({.m = 128, .n = 96, .k = 256, .compute = Compute::tf32}, 2e-3);
}

/// Forward *_aux epilog, then the gradient epilog reading its aux back, on the same backend.
TEST_P(MatmulNumerics, AuxRoundTripThroughGradientEpilogs) {
  const std::int64_t m = 24, n = 16, k = 8;
  for (bool relu : {true, false}) {
    SCOPED_TRACE(relu ? "relu_aux -> drelu_bgrad" : "gelu_aux -> dgelu_bgrad");
    HostMatrix<float> a({}, m, k), b({}, k, n), g1({}, m, k), g2({}, k, n);
    Matmul fwd(place(a.view()), place(b.view()),
               {.epilog = relu ? Epilog::relu_aux : Epilog::gelu_aux, .execution = execution()});
    fwd.plan();
    (void)fwd.execute();
    const Tensor aux = fwd.aux();
    ASSERT_GT(aux.numel(), 0);
    Matmul bwd(
        place(g1.view()), place(g2.view()),
        {.epilog = relu ? Epilog::drelu_bgrad : Epilog::dgelu_bgrad, .execution = execution(), .epilog_aux = aux});
    bwd.plan();
    const Tensor d = host(bwd.execute());
    const Tensor bg = host(bwd.bias_gradient());
    std::vector<cd> ref(static_cast<std::size_t>(m * n));
    std::vector<double> ref_bg(static_cast<std::size_t>(m), 0.0);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double pre = 0, grad = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          pre += (a.at({}, 0, i, kk) * b.at({}, 0, kk, j)).real();
          grad += (g1.at({}, 0, i, kk) * g2.at({}, 0, kk, j)).real();
        }
        const double v = relu ? (pre > 0 ? grad : 0.0) : grad * ref_gelu_grad(pre);
        ref[static_cast<std::size_t>(i * n + j)] = v;
        ref_bg[static_cast<std::size_t>(i)] += v;
      }
    const auto got = read_all(d);
    ASSERT_TRUE(all_finite(got));
    EXPECT_LT(relative_error(got, ref), 1e-4);
    EXPECT_LT(relative_error(read_all(bg), ref_bg), 1e-4);
  }
}

/// 1-D operands follow NumPy's matmul rules.
TEST_P(MatmulNumerics, VectorOperands) {
  HostMatrix<double> a({}, 6, 5), v({}, 1, 5);
  TensorView vec(v.storage.data(), f64, {5});
  const Tensor d = host(matmul(place(a.view()), place(vec), {.execution = execution()}));
  ASSERT_EQ(d.shape(), Shape({6}));
  std::vector<cd> ref(6);
  for (int i = 0; i < 6; ++i)
    for (int kk = 0; kk < 5; ++kk) ref[static_cast<std::size_t>(i)] += a.at({}, 0, i, kk) * v.at({}, 0, 0, kk);
  EXPECT_LT(relative_error(read_all(d), ref), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Spaces, MatmulNumerics, ::testing::Values(Space::cpu, Space::cuda_host, Space::cuda_device),
                         [](const auto& test_info) {
                           return std::string(
                               test_info.param == Space::cpu
                                   ? "cpu"
                                   : (test_info.param == Space::cuda_host ? "cuda_host" : "cuda_device"));
                         });

}  // namespace
}  // namespace cuplan::testing
