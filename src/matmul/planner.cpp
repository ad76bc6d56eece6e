// SPDX-License-Identifier: Apache-2.0
#include "matmul/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "base/geometry.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"

namespace cuplan::detail::mm {
namespace {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

bool is_real_float(DType t) {
  return t == f16 || t == bf16 || t == f32 || t == f64;
}
bool is_supported_input(DType t) {
  return is_real_float(t) || t == c64 || t == c128 || t.is_fp8();
}

/// Splits a view into its batch part and its matrix part; 1-D views become a row (A) or a column (B).
struct Split {
  Shape batch;
  Strides batch_strides;
  std::int64_t rows = 1, cols = 1, row_stride = 0, col_stride = 1;
};

Split split_matrix(const TensorView& v, bool vector_is_row) {
  Split s;
  const int nd = v.ndim();
  if (nd == 1) {
    if (vector_is_row) {
      s.cols = v.shape()[0];
      s.col_stride = v.strides()[0];
      s.row_stride = std::max<std::int64_t>(s.cols, 1);
    } else {
      s.rows = v.shape()[0];
      s.row_stride = v.strides()[0];
      s.col_stride = std::max<std::int64_t>(s.rows, 1);
    }
    return s;
  }
  for (int i = 0; i < nd - 2; ++i) {
    s.batch.push_back(v.shape()[i]);
    s.batch_strides.push_back(v.strides()[i]);
  }
  s.rows = v.shape()[nd - 2];
  s.cols = v.shape()[nd - 1];
  s.row_stride = v.strides()[nd - 2];
  s.col_stride = v.strides()[nd - 1];
  return s;
}

bool compute_fits(Compute compute, DType a) {
  switch (compute) {
    case Compute::automatic:
      return true;
    case Compute::f16:
      return a == f16;
    case Compute::f32:
      return a == f16 || a == bf16 || a == f32 || a == c64 || a.is_fp8();
    case Compute::tf32:
      return a == f32 || a == c64;
    case Compute::f64:
      return a == f64 || a == c128;
  }
  return false;
}

/// Describes `m` (rows x cols with the given strides) in orientation `row_major` when the strides allow it;
/// a matrix with one row or one column fits both orientations.
bool orient_matrix(MatrixLayout& m, bool row_major, std::int64_t row_stride, std::int64_t col_stride) {
  const std::int64_t rows = m.rows, cols = m.cols;
  if (row_major) {
    if (!((cols <= 1 || col_stride == 1) && (rows <= 1 || row_stride >= std::max<std::int64_t>(cols, 1)))) return false;
    m.ld = rows <= 1 ? std::max<std::int64_t>(cols, 1) : row_stride;
  } else {
    if (!((rows <= 1 || row_stride == 1) && (cols <= 1 || col_stride >= std::max<std::int64_t>(rows, 1)))) return false;
    m.ld = cols <= 1 ? std::max<std::int64_t>(rows, 1) : col_stride;
  }
  m.row_major = row_major;
  return true;
}

Compute natural_compute(DType a) {
  return (a == f64 || a == c128) ? Compute::f64 : Compute::f32;
}

}  // namespace

EpilogTraits epilog_traits(Epilog e) noexcept {
  // Each epilog by what it adds to the product: a bias, an activation, its aux buffer out or back in, a gradient.
  switch (e) {
    case Epilog::none:
      return {};
    case Epilog::relu:
      return {.relu = true};
    case Epilog::gelu:
      return {.gelu = true};
    case Epilog::bias:
      return {.bias_input = true};
    case Epilog::relu_bias:
      return {.bias_input = true, .relu = true};
    case Epilog::gelu_bias:
      return {.bias_input = true, .gelu = true};
    case Epilog::relu_aux:
      return {.relu = true, .aux_output = true};
    case Epilog::gelu_aux:
      return {.gelu = true, .aux_output = true};
    case Epilog::relu_aux_bias:
      return {.bias_input = true, .relu = true, .aux_output = true};
    case Epilog::gelu_aux_bias:
      return {.bias_input = true, .gelu = true, .aux_output = true};
    case Epilog::drelu:
      return {.relu = true, .aux_input = true};
    case Epilog::drelu_bgrad:
      return {.relu = true, .aux_input = true, .bias_gradient = true};
    case Epilog::dgelu:
      return {.gelu = true, .aux_input = true};
    case Epilog::dgelu_bgrad:
      return {.gelu = true, .aux_input = true, .bias_gradient = true};
    case Epilog::bgrada:
    case Epilog::bgradb:
      return {.bias_gradient = true};
  }
  return {};  // a value outside the enum (refused by check_epilog before any product is planned)
}

bool epilog_allows_swap(Epilog e) noexcept {
  return e == Epilog::none || e == Epilog::relu || e == Epilog::gelu;
}

// The one shape notation of every cuplan message, "[4, 5]" (the Dims formatter).
std::string shape_string(const Shape& shape) {
  return fmt::format("{}", shape);
}

std::string orientation_note(const Problem& p) {
  return fmt::format("D is {} for epilog {}{}", p.swapped ? "row-major" : "column-major", to_string(p.epilog),
                     p.swapped ? "" : ", cuBLASLt's native orientation");
}

std::optional<Shape> broadcast_shapes(const Shape& x, const Shape& y) {
  const int rank = std::max(x.size(), y.size());
  Shape out = Dims::filled(rank, 1);
  for (int i = 0; i < rank; ++i) {
    const int ix = x.size() - rank + i, iy = y.size() - rank + i;
    const std::int64_t ex = ix >= 0 ? x[ix] : 1, ey = iy >= 0 ? y[iy] : 1;
    if (ex != ey && ex != 1 && ey != 1) return std::nullopt;
    out[i] = ex == 1 ? ey : ex;
  }
  return out;
}

std::optional<Strides> broadcast_strides(const TensorView& view, const Shape& target) {
  if (view.ndim() > target.size()) return std::nullopt;
  Strides out = Dims::filled(target.size(), 0);
  for (int i = 0; i < target.size(); ++i) {
    const int iv = view.ndim() - target.size() + i;
    if (iv < 0) continue;
    const std::int64_t e = view.shape()[iv];
    if (e == target[i]) {
      out[i] = e == 1 ? 0 : view.strides()[iv];
    } else if (e != 1) {
      return std::nullopt;
    }
  }
  return out;
}

Strides matrix_operand_strides(const TensorView& view, const Shape& batch_shape, bool vector_is_row) {
  const Split s = split_matrix(view, vector_is_row);
  Strides out = Dims::filled(batch_shape.size() + 2, 0);
  for (int i = 0; i < batch_shape.size(); ++i) {
    const int io = s.batch.size() - batch_shape.size() + i;
    if (io >= 0 && s.batch[io] != 1) out[i] = s.batch_strides[io];
  }
  out[batch_shape.size()] = s.rows == 1 ? 0 : s.row_stride;
  out[batch_shape.size() + 1] = s.cols == 1 ? 0 : s.col_stride;
  return out;
}

Shape dense_copy_shape(const Shape& batch_shape, std::int64_t rows, std::int64_t cols) {
  Shape s = batch_shape;
  s.push_back(rows);
  s.push_back(cols);
  return s;
}

Strides matrix_stack_strides(const Shape& shape, bool row_major) {
  const int nd = shape.size();
  if (nd < 2 || row_major) return row_major_strides(shape);
  Strides out = Dims::filled(nd, 0);
  const std::int64_t rows = shape[nd - 2], cols = shape[nd - 1];
  out[nd - 2] = 1;
  out[nd - 1] = std::max<std::int64_t>(rows, 1);
  std::int64_t acc = std::max<std::int64_t>(rows * cols, 1);
  for (int i = nd - 3; i >= 0; --i) {
    out[i] = acc;
    acc *= std::max<std::int64_t>(shape[i], 1);
  }
  return out;
}

void describe_dense_copy(MatrixLayout& m, bool full_batch, std::int64_t batch_count) {
  m.ld = std::max<std::int64_t>(m.row_major ? m.cols : m.rows, 1);
  m.batch_stride = (full_batch ? batch_count > 1 : m.batch_stride != 0) ? m.rows * m.cols : 0;
}

MatrixLayout describe_matrix(std::int64_t rows, std::int64_t cols, std::int64_t row_stride, std::int64_t col_stride,
                             const Shape& operand_batch, const Strides& operand_batch_strides,
                             const Shape& batch_shape) {
  MatrixLayout m;
  m.rows = rows;
  m.cols = cols;
  // Unit stride along columns (row-major) or along rows (column-major); an axis of extent 1 has any stride.
  if (!orient_matrix(m, true, row_stride, col_stride) && !orient_matrix(m, false, row_stride, col_stride))
    m.needs_copy = true;
  // One batch stride: either every batch axis with extent > 1 is broadcast (stride 0), or all are present and
  // nest like a dense array (stride[i] = stride[i + 1] * extent[i + 1] over those axes).
  bool all_broadcast = true, all_present = true;
  std::int64_t stride = 0, expected = -1;
  for (int i = batch_shape.size() - 1; i >= 0; --i) {
    if (batch_shape[i] == 1) continue;
    const int io = operand_batch.size() - batch_shape.size() + i;
    const std::int64_t e = io >= 0 ? operand_batch[io] : 1;
    if (e == 1) {
      all_present = false;
      continue;
    }
    all_broadcast = false;
    const std::int64_t s = operand_batch_strides[io];
    if (s < 0 || (expected >= 0 && s != expected)) all_present = false;
    if (expected < 0) stride = s;
    expected = s * e;
  }
  if (all_broadcast) {
    m.batch_stride = 0;
  } else if (all_present) {
    m.batch_stride = stride;
  } else {
    m.needs_copy = true;
  }
  return m;
}

namespace {

/// Picks the form (swapped: D row-major; native: D column-major) and makes every conjugated operand consumable.
/// cuBLASLt conjugates an operand only together with a transpose: the swapped form transposes column-major
/// operands, the native form row-major ones. Conjugated operands read in place vote for the form that conjugates
/// them (a vector-shaped matrix fits both and does not vote); an operand the chosen form cannot conjugate in place
/// is copied in the orientation it can. Epilogs other than none/relu/gelu are real-only and always native.
void choose_form(Problem& p, const ProblemSpec& spec, const Split& sa, const Split& sb, const char* who) {
  p.swapped = epilog_allows_swap(spec.epilog);
  struct Conjugated {
    bool conj;
    MatrixLayout* layout;
    const Split* split;
    const char* name;
  };
  const Conjugated operands[] = {{spec.conjugate_a, &p.a, &sa, "a"}, {spec.conjugate_b, &p.b, &sb, "b"}};
  bool wants_native = false, wants_swapped = false;
  for (const Conjugated& o : operands) {
    if (!o.conj || o.layout->needs_copy || o.layout->rows <= 1 || o.layout->cols <= 1) continue;
    (o.layout->row_major ? wants_native : wants_swapped) = true;
  }
  if (p.swapped && wants_native && !wants_swapped) p.swapped = false;
  const bool conjugable_row_major = !p.swapped;
  for (const Conjugated& o : operands) {
    if (!o.conj) continue;
    MatrixLayout& m = *o.layout;
    if (!m.needs_copy && !orient_matrix(m, conjugable_row_major, o.split->row_stride, o.split->col_stride)) {
      m.needs_copy = true;
      log(LogLevel::info,
          "{}: conjugate_{}: operand {} is {} but this product ({}) conjugates only {} operands; using a {} copy", who,
          o.name, o.name, m.row_major ? "row-major" : "column-major", p.swapped ? "row-major D" : "column-major D",
          conjugable_row_major ? "row-major" : "column-major", conjugable_row_major ? "row-major" : "column-major");
    }
    if (m.needs_copy) m.row_major = conjugable_row_major;
  }
  for (MatrixLayout* m : {&p.a, &p.b})
    if (m->needs_copy) describe_dense_copy(*m, true, p.batch_count);
}

}  // namespace

Problem plan_problem(const ProblemSpec& spec, const char* who) {
  const TensorView& a = spec.a;
  const TensorView& b = spec.b;
  Problem p;
  p.epilog = spec.epilog;
  const EpilogTraits traits = epilog_traits(spec.epilog);

  // Dtypes.
  for (auto [view, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}}) {
    if (!is_supported_input(view->dtype()))
      throw InvalidArgument(
          fmt::format("{}: operand {} has dtype {}; expected one of f16, bf16, f32, f64, c64, c128, "
                      "f8_e4m3, f8_e5m2",
                      who, name, view->dtype().name()));
  }
  const bool fp8 = a.dtype().is_fp8() || b.dtype().is_fp8();
  const bool dtypes_combine =
      fp8 ? (a.dtype().is_fp8() && b.dtype().is_fp8() && !(a.dtype() == f8_e5m2 && b.dtype() == f8_e5m2))
          : a.dtype() == b.dtype();
  if (!dtypes_combine)
    throw InvalidArgument(
        fmt::format("{}: dtypes of a ({}) and b ({}) do not combine; expected equal dtypes, or two fp8 "
                    "types that are not both f8_e5m2",
                    who, a.dtype().name(), b.dtype().name()));
  p.a_dtype = a.dtype();
  p.b_dtype = b.dtype();

  // Result dtype and compute type.
  if (fp8) {
    p.result_dtype = spec.result_dtype.value_or(bf16);
    if (!(p.result_dtype == bf16 || p.result_dtype == f16 || p.result_dtype == f32))
      throw NotSupported(
          fmt::format("{}: result_dtype {} for fp8 operands; expected bf16, f16 or f32", who, p.result_dtype.name()));
    if (!spec.scale_a || !spec.scale_b)
      throw InvalidArgument(fmt::format("{}: fp8 operands need scales.a and scales.b (given: a {}, b {})", who,
                                        spec.scale_a ? "yes" : "no", spec.scale_b ? "yes" : "no"));
    if (spec.scale_c || spec.scale_d)
      throw InvalidArgument(
          fmt::format("{}: scales.c and scales.d apply to fp8 C and D only; the result here is {}, "
                      "expected them unset",
                      who, p.result_dtype.name()));
  } else {
    p.result_dtype = spec.result_dtype.value_or(a.dtype());
    const bool widen = (a.dtype() == f16 || a.dtype() == bf16) && p.result_dtype == f32;
    if (!(p.result_dtype == a.dtype() || widen))
      throw InvalidArgument(fmt::format("{}: result_dtype {} for {} operands; expected {}{}", who,
                                        p.result_dtype.name(), a.dtype().name(), a.dtype().name(),
                                        (a.dtype() == f16 || a.dtype() == bf16) ? " or f32" : ""));
    if (spec.scale_a || spec.scale_b || spec.scale_c || spec.scale_d)
      throw InvalidArgument(fmt::format("{}: scales are for fp8 operands; a is {}", who, a.dtype().name()));
  }
  if (!compute_fits(spec.compute, a.dtype()))
    throw InvalidArgument(fmt::format("{}: compute {} does not combine with operand dtype {}", who,
                                      to_string(spec.compute), a.dtype().name()));
  p.compute = spec.compute == Compute::automatic ? natural_compute(a.dtype()) : spec.compute;
  const bool complex = a.dtype().is_complex();
  if (!complex && (spec.alpha.imag() != 0 || spec.beta.imag() != 0))
    throw InvalidArgument(fmt::format("{}: alpha = ({}, {}) and beta = ({}, {}) must be real for {} operands", who,
                                      spec.alpha.real(), spec.alpha.imag(), spec.beta.real(), spec.beta.imag(),
                                      a.dtype().name()));
  if ((spec.conjugate_a || spec.conjugate_b) && !complex)
    throw InvalidArgument(
        fmt::format("{}: conjugate_a/conjugate_b need complex operands; a is {}", who, a.dtype().name()));
  p.conjugate_a = spec.conjugate_a;
  p.conjugate_b = spec.conjugate_b;
  if (complex && spec.epilog != Epilog::none)
    throw NotSupported(
        fmt::format("{}: epilog {} needs real operands; a is {}", who, to_string(spec.epilog), a.dtype().name()));

  // Shapes.
  if (a.ndim() < 1 || b.ndim() < 1)
    throw InvalidArgument(fmt::format("{}: operands need at least 1 dimension; a is {}, b is {}", who,
                                      shape_string(a.shape()), shape_string(b.shape())));
  const Split sa = split_matrix(a, /*vector_is_row=*/true);
  const Split sb = split_matrix(b, /*vector_is_row=*/false);
  p.m = sa.rows;
  p.k = sa.cols;
  p.n = sb.cols;
  if (sa.cols != sb.rows)
    throw InvalidArgument(fmt::format("{}: inner dimensions differ: a {} has {} columns, b {} has {} rows", who,
                                      shape_string(a.shape()), sa.cols, shape_string(b.shape()), sb.rows));
  auto batch = broadcast_shapes(sa.batch, sb.batch);
  if (!batch)
    throw InvalidArgument(fmt::format("{}: batch shapes {} of a and {} of b cannot broadcast", who,
                                      shape_string(sa.batch), shape_string(sb.batch)));
  p.batch_shape = *batch;
  p.batch_count = checked_numel(p.batch_shape, "batch shape");
  p.result_shape = p.batch_shape;
  if (a.ndim() >= 2) p.result_shape.push_back(p.m);
  if (b.ndim() >= 2) p.result_shape.push_back(p.n);
  require_addressable_result(who, p.result_shape, p.result_dtype);

  p.a = describe_matrix(sa.rows, sa.cols, sa.row_stride, sa.col_stride, sa.batch, sa.batch_strides, p.batch_shape);
  p.b = describe_matrix(sb.rows, sb.cols, sb.row_stride, sb.col_stride, sb.batch, sb.batch_strides, p.batch_shape);
  choose_form(p, spec, sa, sb, who);

  // D: row-major in the swapped form, column-major (batch axes outermost) in the native one; the returned tensor
  // drops the M / N axis of a 1-D A / B.
  p.d_strides = matrix_stack_strides(dense_copy_shape(p.batch_shape, p.m, p.n), p.swapped);
  {
    const int nb = p.batch_shape.size();
    p.result_strides = Strides();
    for (int i = 0; i < nb; ++i) p.result_strides.push_back(p.d_strides[i]);
    if (a.ndim() >= 2) p.result_strides.push_back(p.d_strides[nb]);
    if (b.ndim() >= 2) p.result_strides.push_back(p.d_strides[nb + 1]);
  }

  // C: broadcastable to the result; kept as strides against the full (batch..., M, N) shape.
  if (spec.beta != std::complex<double>(0.0) && !spec.c)
    throw InvalidArgument(
        fmt::format("{}: beta = ({}, {}) needs operand c; none given", who, spec.beta.real(), spec.beta.imag()));
  if (spec.c) {
    const TensorView& c = *spec.c;
    if (!(c.dtype() == p.result_dtype))
      throw InvalidArgument(fmt::format("{}: operand c has dtype {}; expected the result dtype {}", who,
                                        c.dtype().name(), p.result_dtype.name()));
    auto strides = broadcast_strides(c, p.result_shape);
    if (!strides)
      throw InvalidArgument(
          fmt::format("{}: operand c has shape {}; expected a shape that broadcasts to the result "
                      "shape {}",
                      who, shape_string(c.shape()), shape_string(p.result_shape)));
    // Re-insert the squeezed M / N axes with stride 0.
    Strides s;
    const int nb = p.batch_shape.size();
    for (int i = 0; i < nb; ++i) s.push_back((*strides)[i]);
    s.push_back(a.ndim() >= 2 ? (*strides)[nb] : 0);
    s.push_back(b.ndim() >= 2 ? (*strides)[strides->size() - 1] : 0);
    p.has_c = true;
    p.c_strides = s;
    Shape c_batch;
    Strides c_batch_strides;
    for (int i = 0; i < nb; ++i) {
      c_batch.push_back(s[i] == 0 ? 1 : p.batch_shape[i]);
      c_batch_strides.push_back(s[i]);
    }
    const bool rows_broadcast = p.m > 1 && s[nb] == 0, cols_broadcast = p.n > 1 && s[nb + 1] == 0;
    p.c = describe_matrix(p.m, p.n, s[nb], s[nb + 1], c_batch, c_batch_strides, p.batch_shape);
    // C is read in place only in D's orientation; otherwise it is copied into D first.
    if (rows_broadcast || cols_broadcast || !orient_matrix(p.c, p.swapped, s[nb], s[nb + 1])) p.c.needs_copy = true;
  }

  // Bias: length M (per row of D), shared by the batch or one per batch entry.
  if (traits.bias_input != spec.bias.has_value()) {
    if (traits.bias_input)
      throw InvalidArgument(
          fmt::format("{}: epilog {} needs a bias of length M = {}; none given", who, to_string(spec.epilog), p.m));
    throw InvalidArgument(
        fmt::format("{}: a bias was given but epilog {} does not use one", who, to_string(spec.epilog)));
  }
  if (spec.bias) {
    const TensorView& bias = *spec.bias;
    if (!(bias.dtype() == p.result_dtype))
      throw InvalidArgument(fmt::format("{}: bias has dtype {}; expected the result dtype {}", who, bias.dtype().name(),
                                        p.result_dtype.name()));
    Shape batched = p.batch_shape;
    batched.push_back(p.m);
    const bool shared = bias.ndim() == 1 && bias.shape()[0] == p.m;
    const bool per_batch = p.batch_count > 1 && bias.shape() == batched;
    if (!shared && !per_batch)
      throw InvalidArgument(fmt::format("{}: bias has shape {}; expected [{}] (length M) or {}", who,
                                        shape_string(bias.shape()), p.m, shape_string(batched)));
    if (!bias.is_contiguous())
      throw InvalidArgument(
          fmt::format("{}: bias must be dense (unit stride); its strides are {}", who, shape_string(bias.strides())));
    p.has_bias = true;
    p.bias_batch_stride = shared ? 0 : p.m;
  }
  if (traits.bias_gradient) {
    p.bias_gradient_length = spec.epilog == Epilog::bgradb ? p.n : p.m;
    p.bias_gradient_shape = p.batch_shape;
    p.bias_gradient_shape.push_back(p.bias_gradient_length);
  }

  // Aux: cuBLASLt's layout (relu: a bit mask; gelu: the pre-activation values) on CUDA; on the CPU a row-major
  // batch x M x N array (relu: i8 of 0/1; gelu: result dtype).
  if (traits.aux_output || traits.aux_input) {
    p.has_aux = true;
    const bool relu = traits.relu;
    p.aux_dtype = relu ? i8 : p.result_dtype;
    p.aux_shape = p.batch_shape;
    if (spec.route.aux_layout == AuxLayout::cublaslt) {
      // In D's (native, column-major) orientation: N columns of aux_ld elements (bits for the relu mask), aux_ld a
      // multiple of 128 (relu) or 8 (gelu) as cuBLASLt requires.
      p.aux_ld = round_up(std::max<std::int64_t>(p.m, 1), relu ? 128 : 8);
      p.aux_batch_stride = p.aux_ld * p.n;
      p.aux_shape.push_back(p.n);
      p.aux_shape.push_back(relu ? p.aux_ld / 8 : p.aux_ld);
    } else {
      p.aux_ld = p.n;
      p.aux_batch_stride = p.m * p.n;
      p.aux_shape.push_back(p.m);
      p.aux_shape.push_back(p.n);
    }
  }
  if (traits.aux_input != spec.epilog_aux.has_value()) {
    if (traits.aux_input)
      throw InvalidArgument(
          fmt::format("{}: epilog {} needs epilog_aux (the aux output of the forward epilog, shape "
                      "{}); none given",
                      who, to_string(spec.epilog), shape_string(p.aux_shape)));
    throw InvalidArgument(
        fmt::format("{}: epilog_aux was given but epilog {} does not read one", who, to_string(spec.epilog)));
  }
  if (spec.epilog_aux) {
    const TensorView& aux = *spec.epilog_aux;
    if (!(aux.dtype() == p.aux_dtype) || !(aux.shape() == p.aux_shape) || !aux.is_contiguous())
      throw InvalidArgument(
          fmt::format("{}: epilog_aux is {} {}{}; expected dense {} {} as produced by the forward "
                      "epilog on this backend",
                      who, aux.dtype().name(), shape_string(aux.shape()), aux.is_contiguous() ? "" : " (not dense)",
                      p.aux_dtype.name(), shape_string(p.aux_shape)));
  }
  return p;
}

}  // namespace cuplan::detail::mm
