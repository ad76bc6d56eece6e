// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pure planning layer of Matmul: shapes, broadcasting, how each operand's strides map to a BLAS description
// (unit-stride axis, leading dimension, one batch stride), result shape and dtype, epilog requirements. No CUDA
// and no memory access: everything here is decided from TensorView metadata, so it is tested on any host.

#include <cstdint>
#include <optional>

#include "cuplan/matmul.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail::mm {

/// What an epilog needs and produces.
struct EpilogTraits {
  bool bias_input = false;     ///< adds a bias vector
  bool relu = false;           ///< forward relu
  bool gelu = false;           ///< forward gelu
  bool aux_output = false;     ///< writes the relu mask / gelu input
  bool aux_input = false;      ///< drelu / dgelu: reads it back
  bool bias_gradient = false;  ///< writes a bias gradient
};
EpilogTraits epilog_traits(Epilog epilog) noexcept;
/// True when the epilog may run as D^T = op(B)^T op(A)^T in cuBLASLt's column-major convention, which leaves D
/// row-major (none, relu, gelu). Epilogs with a bias, an aux buffer or a gradient run in cuBLASLt's native form
/// (A and B in their roles, D column-major), the only form cuBLASLt offers algorithms for; bias and bias gradient
/// then stay per row of D (length M) as cuBLASLt defines them.
bool epilog_allows_swap(Epilog epilog) noexcept;

/// One matrix operand as a BLAS routine sees it. The logical matrix is rows x cols (A: M x K, B: K x N).
struct MatrixLayout {
  /// The operand is copied before the product: its strides cannot be described by (unit-stride axis, ld, one batch
  /// stride), or it is conjugated in an orientation the chosen form cannot conjugate. The copy is dense, broadcast
  /// to the full batch, in the orientation `row_major`, and `ld` / `batch_stride` describe the copy.
  bool needs_copy = false;
  bool row_major = true;  ///< unit stride along columns (else along rows)
  std::int64_t rows = 0, cols = 0;
  std::int64_t ld = 1;            ///< stride of the non-unit axis, >= the extent of the unit axis
  std::int64_t batch_stride = 0;  ///< elements between batch entries; 0 when broadcast over the batch
};

/// Where the aux output (relu mask, gelu pre-activation) lives: cuBLASLt's layout (D's native column-major
/// orientation, leading dimension padded as cuBLASLt requires) or a row-major batch x M x N array (the CPU's).
enum class AuxLayout { row_major, cublaslt };

/// What the route that runs the product asks of the planning (its traits; FFT's routes fill a LayoutRequest).
struct RouteRequest {
  AuxLayout aux_layout = AuxLayout::row_major;
};

/// Everything the planning layer reads, as metadata.
struct ProblemSpec {
  TensorView a, b;
  std::optional<TensorView> c, bias, epilog_aux;
  std::complex<double> alpha{1.0}, beta{0.0};
  Epilog epilog = Epilog::none;
  Compute compute = Compute::automatic;
  std::optional<DType> result_dtype;
  bool conjugate_a = false, conjugate_b = false;
  bool scale_a = false, scale_b = false, scale_c = false, scale_d = false;  ///< fp8 scale factors given
  RouteRequest route;  ///< what the backend that runs the product needs (aux layouts differ between backends)
};

/// The planned problem: D (batch..., M, N) = epilog(alpha op(A) op(B) + beta C).
struct Problem {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch_count = 1;
  Shape batch_shape;   ///< broadcast batch shape
  Shape result_shape;  ///< batch + (M, N), without the M / N axis for 1-D A / B (NumPy rules)
  DType a_dtype = f32, b_dtype = f32, result_dtype = f32;
  Compute compute = Compute::f32;  ///< resolved, never automatic
  Epilog epilog = Epilog::none;
  /// cuBLASLt computes D^T = op(B)^T op(A)^T and D is row-major; else the native form and D is column-major
  /// (batch axes outermost). Chosen from the epilog and, for conjugated operands, their layouts.
  bool swapped = false;
  Strides d_strides;       ///< D's strides against the full shape batch + (M, N)
  Strides result_strides;  ///< D's strides against result_shape (the returned tensor's strides)
  bool conjugate_a = false, conjugate_b = false;
  MatrixLayout a, b;  ///< A as M x K, B as K x N
  /// C, described against D's full shape (batch..., M, N) with stride 0 on broadcast axes.
  bool has_c = false;
  Strides c_strides;
  MatrixLayout c;  ///< C as M x N when row-major with one batch stride (usable directly by cuBLASLt)
  bool has_bias = false;
  std::int64_t bias_batch_stride = 0;  ///< 0: one bias for the whole batch, else M
  std::int64_t bias_gradient_length = 0;
  Shape bias_gradient_shape;
  /// Aux output / input: dtype, shape and, for cuBLASLt, the leading dimension and batch stride (in elements,
  /// or bits for the relu mask).
  bool has_aux = false;
  DType aux_dtype = i8;
  Shape aux_shape;
  std::int64_t aux_ld = 0, aux_batch_stride = 0;
};

/// Validates the specification and plans the problem; InvalidArgument / NotSupported with the operand, the
/// expected and the actual value. `who` prefixes messages ("Matmul", "matmul").
Problem plan_problem(const ProblemSpec& spec, const char* who);

/// Describes a logical rows x cols matrix with the given matrix strides and per-batch strides against
/// `batch_shape` (operand batch dims right-aligned, missing or extent-1 dims broadcast).
MatrixLayout describe_matrix(std::int64_t rows, std::int64_t cols, std::int64_t row_stride, std::int64_t col_stride,
                             const Shape& operand_batch, const Strides& operand_batch_strides,
                             const Shape& batch_shape);

/// Broadcasts two batch shapes by NumPy rules; nullopt when they cannot broadcast.
std::optional<Shape> broadcast_shapes(const Shape& x, const Shape& y);

/// Strides of `view` broadcast to `target` (right-aligned; 0 on new or extent-1 axes); nullopt when incompatible.
std::optional<Strides> broadcast_strides(const TensorView& view, const Shape& target);

/// Strides of a matrix operand against batch_shape + (rows, cols): 0 on broadcast batch axes; a 1-D operand is a
/// row (`vector_is_row`, as A) or a column (as B).
Strides matrix_operand_strides(const TensorView& view, const Shape& batch_shape, bool vector_is_row);

/// A dense row-major shape batch + (rows, cols) for the copy of an operand that needs one.
Shape dense_copy_shape(const Shape& batch_shape, std::int64_t rows, std::int64_t cols);

/// Dense strides of a matrix stack `shape` (batch axes outermost, nested): row-major matrices, or column-major
/// ones (last two axes strides (1, rows)). Shapes of fewer than 2 axes are dense vectors.
Strides matrix_stack_strides(const Shape& shape, bool row_major);

/// Turns `layout` into the description of a dense copy of itself in its orientation `row_major` (ld = the unit
/// axis extent; batch stride rows x cols when it had one or when `full_batch`, else 0).
void describe_dense_copy(MatrixLayout& layout, bool full_batch, std::int64_t batch_count);

/// "(2, 3, 4)" for messages.
std::string shape_string(const Shape& shape);

/// Why D has its planned orientation, for a strides mismatch of an execute's `out`: "D is column-major for epilog
/// none, cuBLASLt's native orientation" (the planning follows cuBLASLt's native form on every backend, so that
/// every backend returns the same layout).
std::string orientation_note(const Problem& problem);

}  // namespace cuplan::detail::mm
