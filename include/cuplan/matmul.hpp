// SPDX-License-Identifier: Apache-2.0
#pragma once
// Matrix multiplication (docs/matmul.md): D = epilog(alpha * op(A) @ op(B) + beta * C), on cuBLASLt or on the
// CPU (OpenBLAS), as a stateful class (Matmul) or a function (matmul, matmul_with_aux) with a shared plan cache.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuplan/dtype.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/export.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// What happens to the product after alpha/beta scaling (cuBLASLt's epilogues, same definitions on every backend).
/// bias: D[m, n] += bias[m] (bias per row of D, length M). gelu is the tanh approximation
/// 0.5 x (1 + tanh(0.7978845608 (x + 0.044715 x^3))). The *_aux forms also return an auxiliary output (the relu mask
/// or the gelu input) that the gradient forms drelu/dgelu take back as `epilog_aux`; *_bgrad, bgrada and bgradb also
/// return a bias gradient.
enum class Epilog : std::uint8_t {
  none,
  relu,
  gelu,
  bias,
  relu_bias,
  gelu_bias,
  relu_aux,
  gelu_aux,
  relu_aux_bias,
  gelu_aux_bias,
  drelu,        ///< D = product * (aux mask); needs epilog_aux from relu_aux / relu_aux_bias
  drelu_bgrad,  ///< drelu and bias gradient (row sums of D, length M)
  dgelu,        ///< D = product * gelu'(aux); needs epilog_aux from gelu_aux / gelu_aux_bias
  dgelu_bgrad,  ///< dgelu and bias gradient (row sums of D, length M)
  bgrada,       ///< bias gradient from A: sum over k of op(A)[m, k], length M
  bgradb,       ///< bias gradient from B: sum over k of op(B)[k, n], length N
};

/// Compute precision. `automatic` is the natural one for the operand dtypes (f32 accumulation for f16/bf16/fp8,
/// f32 for f32/c64, f64 for f64/c128). `tf32` lets f32/c64 products use TF32 tensor cores (CUDA only; the CPU
/// computes in f32). `f16` accumulates f16 products in f16.
// GCC 12 reports these scoped enumerators as shadowing the dtype constants cuplan::f16/f32/f64, although a scoped
// enumerator is only ever named qualified (Compute::f32) and hides nothing; Clang does not warn.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
enum class Compute : std::uint8_t { automatic, f16, f32, tf32, f64 };
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// One fp8 scale factor: a host value, or a one-element f32 tensor in device memory read when the product runs.
struct ScaleFactor {
  std::optional<float> value{};       ///< the factor as a host value
  std::optional<TensorRef> tensor{};  ///< the factor as a one-element f32 device tensor (instead of `value`)
  /// True when `value` or `tensor` is set.
  bool given() const noexcept { return value.has_value() || tensor.has_value(); }
};

/// Scale factors of an fp8 product: D = scale_a * scale_b * (A @ B) ... as cuBLASLt defines them. `a` and `b` are
/// required for fp8 operands; `c` and `d` apply only to fp8 C / D, which cuplan does not produce, and must be unset.
struct Fp8Scales {
  ScaleFactor a{};  ///< scale of A (required for fp8 A)
  ScaleFactor b{};  ///< scale of B (required for fp8 B)
  ScaleFactor c{};  ///< scale of an fp8 C (must be unset)
  ScaleFactor d{};  ///< scale of an fp8 D (must be unset)
};

/// Options of a product. The order of the fields is part of the API: new fields are appended at the end
/// (docs/getting-started.md, "Options are aggregates").
struct MatmulOptions {
  std::optional<TensorRef> c{};             ///< addend, broadcastable to D's shape; used with beta
  std::complex<double> alpha{1.0};          ///< scale of the product (real for real products)
  std::complex<double> beta{0.0};           ///< scale of C (real for real products)
  Epilog epilog = Epilog::none;             ///< what happens to the scaled product (see Epilog)
  std::optional<TensorRef> bias{};          ///< length M (or batch..., M), dtype of D
  Compute compute = Compute::automatic;     ///< compute precision (see Compute)
  Execution execution{};                    ///< where the product runs (see Execution)
  Blocking blocking = Blocking::automatic;  ///< when calls return (see Blocking)
  /// Default stream of every phase of the class form (plan, autotune, execute, reset_operand) and the stream of the
  /// function forms; empty: the current stream at each call (docs/streams.md, "One rule for every phase").
  std::optional<StreamRef> stream{};
  EventList after{};                      ///< events the first phase waits for
  std::optional<TensorRef> epilog_aux{};  ///< input of drelu / dgelu (the aux output of the forward epilog)
  std::optional<DType> result_dtype{};    ///< default: A's dtype (bf16 for fp8 operands)
  bool conjugate_a = false;               ///< op(A) = conj(A) for complex A
  bool conjugate_b = false;               ///< op(B) = conj(B) for complex B
  Fp8Scales scales{};                     ///< scale factors of fp8 operands
  std::size_t memory_limit = 0;           ///< most workspace bytes an algorithm may use; 0 = 32 MiB
  /// CUDA execution: an execute whose pointers, scalars and algorithm came among the last few calls is captured once
  /// as a CUDA graph and then replayed, which costs the host about a microsecond instead of a cuBLASLt call's
  /// several. Same work, same stream order; false enqueues every call directly (docs/matmul.md, "Graph replay").
  bool graph_replay = true;
  /// CUDA execution of host operands: the most device memory (bytes) one call may hold for them. Products are run
  /// tile by tile within this limit, split along the batch, the rows of A, C and D, and N when B does not fit;
  /// those with an aux buffer, bias gradient, fp8 scaling or conjugation run unsplit and must fit it
  /// (docs/staging.md). 0: half the device memory free when the first execute runs.
  std::size_t device_memory_limit = 0;
  /// Function forms: checked like every operation's planning mode (see PlanningMode); the call plans before it
  /// returns in either mode: cuBLASLt's heuristic query loads kernel libraries, which waits for the whole device.
  PlanningMode planning_mode = PlanningMode::blocking;
  /// Where cuBLASLt's workspace comes from (see WorkAreaPolicy): automatic is `owned` for Matmul and `shared` for
  /// the function form. CPU execution has none (an external buffer is refused there).
  WorkAreaPolicy work_area = WorkAreaPolicy::automatic;
  /// The caller's buffer for WorkAreaPolicy::external: contiguous device memory on the product's device, 256-byte
  /// aligned, apart from every operand and `out`, at least workspace_size() bytes (estimate_workspace_size() says how
  /// many before any object exists). It must stay valid while the object can run.
  std::optional<TensorView> work_area_buffer{};
};

/// One operand of a planned product, for Matmul::reset_operand.
enum class MatmulOperand : std::uint8_t { a, b, c, bias, epilog_aux };

/// New operands for Matmul::reset_operands; unset ones keep their current value. Shapes, dtypes, layouts and
/// alignment classes must match those the object was planned for.
struct MatmulOperands {
  /// \name Operands
  /// @{

  /// The new operand of that name (MatmulOperand); empty: unchanged.
  std::optional<TensorRef> a{}, b{}, c{}, bias{};
  std::optional<TensorRef> epilog_aux{};
  /// @}
};

/// Options of one Matmul::execute call.
struct MatmulExecuteOptions {
  std::optional<StreamRef> stream{};  ///< stream of this call; empty: MatmulOptions::stream, else the current stream
  EventList after{};                  ///< events this call's work waits for
  bool release_workspace = false;     ///< release the workspace after this call (stream-ordered) instead of keeping it
  /// Write D here instead of allocating it; execute then returns a Tensor that wraps `out`. It must have D's dtype,
  /// shape and planned strides (row-major or column-major, see Matmul), live where D would (device memory of the
  /// object's device for device operands, 16-byte aligned; host memory otherwise) and stay valid until the product
  /// is done in stream order. A Tensor given here is ordered as every cuplan Tensor is (its last write and reads on
  /// other streams, docs/streams.md); a TensorView is borrowed, and its other users are yours to order.
  std::optional<TensorRef> out{};
};

/// Heuristic preferences (cuBLASLt's cublasLtMatmulPreference attributes).
struct MatmulPreferences {
  int limit = 8;                              ///< most candidate algorithms to ask for
  std::uint32_t reduction_scheme_mask = 0x7;  ///< split-k reduction schemes allowed (CUBLASLT_REDUCTION_SCHEME_*)
  int max_waves_count = 0;                    ///< 0: no limit
};

/// Options of Matmul::plan.
struct MatmulPlanOptions {
  MatmulPreferences preferences{};        ///< what the cuBLASLt heuristic is asked for
  std::optional<Epilog> epilog{};         ///< replaces the constructor's epilog (and its inputs below) when set
  std::optional<TensorRef> bias{};        ///< bias of the replacing epilog
  std::optional<TensorRef> epilog_aux{};  ///< aux input of the replacing epilog (drelu / dgelu)
  std::optional<StreamRef> stream{};      ///< stream of this phase; empty: MatmulOptions::stream, else the current one
  EventList after{};                      ///< events this phase waits for
};

/// Options of Matmul::autotune.
struct AutotuneOptions {
  int iterations = 3;                 ///< timed runs per candidate (the median is kept)
  bool flush_cache = true;            ///< overwrite a buffer larger than L2 before each timed run
  std::optional<StreamRef> stream{};  ///< stream of the timed runs; empty: MatmulOptions::stream, else the current one
  /// Called after each round of timed runs with where the tuning stands (see AutotuneProgress); empty: none. Not
  /// called when nothing is timed (the CPU, a saved choice). An exception it throws cancels the tuning: the
  /// object keeps the algorithm order it had, stays usable, and the exception leaves autotune().
  AutotuneProgressCallback progress{};
};

/// One candidate algorithm of a planned product.
struct AlgorithmInfo {
  int index = 0;                       ///< position in algorithms() (0 = the one execute uses)
  int algorithm_id = -1;               ///< cuBLASLt CUBLASLT_ALGO_CONFIG_ID (-1 on the CPU)
  int tile = 0;                        ///< CUBLASLT_ALGO_CONFIG_TILE_ID
  int stages = 0;                      ///< CUBLASLT_ALGO_CONFIG_STAGES_ID
  int split_k = 1;                     ///< CUBLASLT_ALGO_CONFIG_SPLITK_NUM
  int reduction_scheme = 0;            ///< CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME
  std::size_t workspace_bytes = 0;     ///< workspace the algorithm needs
  float waves_count = 0;               ///< heuristic's estimate of device utilisation
  std::optional<float> measured_ms{};  ///< median time from autotune(), when measured
  std::string description{};           ///< one line for logs
};

/// Outputs of an epilog that produces more than D.
struct MatmulResult {
  Tensor d{};              ///< the product D
  Tensor aux{};            ///< relu mask or gelu input (the *_aux epilogs), else empty
  Tensor bias_gradient{};  ///< *_bgrad, bgrada, bgradb, else empty
};

}  // namespace CUPLAN_ABI_NAMESPACE
namespace detail {
class MatmulImpl;
}  // namespace detail
inline namespace CUPLAN_ABI_NAMESPACE {

/// A planned product bound to its operands. Move-only. The result of execute() has shape batch... x M x N and the
/// dtype of D; it lives with the operands (on the host for host operands). Its layout is planned, the same on every
/// backend: row-major for the epilogs none, relu and gelu; column-major (batch axes outermost, last two axes strides
/// (1, M)) for epilogs with a bias, an aux output or a gradient, cuBLASLt's native orientation. Complex products
/// with conjugated row-major operands are column-major too. Read D through its strides.
class CUPLAN_API Matmul {
 public:
  /// Validates operands and options and chooses the layout; no GPU work yet.
  Matmul(TensorRef a, TensorRef b, MatmulOptions options = {});
  /// Takes over the plan and operands; the moved-from object's calls throw StateError.
  Matmul(Matmul&&) noexcept;
  /// Releases this object's plan and takes over the other's plan and operands; the moved-from object's calls throw
  /// StateError.
  Matmul& operator=(Matmul&&) noexcept;
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;
  ~Matmul();  ///< free()

  /// Asks the heuristic for candidates (cuBLASLt) or prepares the CPU product; execute uses the first.
  void plan(MatmulPlanOptions options = {});
  /// The candidates found by plan(), in heuristic order (after autotune(): measured order); execute runs the first.
  std::vector<AlgorithmInfo> algorithms() const;
  /// Times every candidate on the real operands (writing into scratch outputs, never the caller's) and reorders
  /// them; the heuristic's first stays first unless another is more than 1 % faster (docs/matmul.md).
  void autotune(AutotuneOptions options = {});
  /// Runs the product. Non-blocking for device operands with CUDA execution (the blocking rule,
  /// docs/getting-started.md).
  Tensor execute(const MatmulExecuteOptions& options = {});
  /// Replaces one operand by one of the planned dtype, shape, strides, memory and alignment class (InvalidArgument
  /// naming what differs otherwise), e.g. `b` for each new step. Ordered after the object's last phase on
  /// `stream`, else on the object's default stream (docs/streams.md, "One rule for every phase").
  void reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream = {});
  /// Replaces several operands at once (unset ones stay), with the checks and ordering of reset_operand; a rejected
  /// call changes none.
  void reset_operands(MatmulOperands operands, std::optional<StreamRef> stream = {});
  /// Forgets the operands (execute needs reset_operand or reset_operands first).
  void release_operand();
  /// Releases plan, workspace and operands; every later call throws StateError. Never throws.
  void free() noexcept;

  /// Shape of D: batch... x M x N.
  Shape result_shape() const;
  /// Element type of D (MatmulOptions::result_dtype, else A's dtype, bf16 for fp8 operands).
  DType result_dtype() const;
  /// Strides of D as planned (row-major or column-major, see above); an `out` given to execute must have them.
  Strides result_strides() const;
  /// Workspace bytes of the planned algorithm (cuBLASLt's heuristic choice, or the autotuned one); 0 before plan()
  /// and on the CPU.
  std::size_t workspace_size() const;
  /// One line: product size, dtypes, epilog, layout of D, backend and algorithm.
  std::string describe() const;
  /// The object's lifecycle, for logs: "live", "freed" (free() was called) or "moved-from". Never throws; the
  /// other members throw StateError unless it is "live".
  std::string_view state() const noexcept;

  /// Aux output of the last execute (relu mask / gelu input for the *_aux epilogs), else an empty Tensor.
  Tensor aux() const;
  /// Bias gradient of the last execute (*_bgrad, bgrada, bgradb), else an empty Tensor.
  Tensor bias_gradient() const;

 private:
  std::unique_ptr<detail::MatmulImpl> impl_;
};

/// D = epilog(alpha op(A) @ op(B) + beta C), planned once per distinct problem through the shared plan cache.
/// Epilogs with extra outputs (*_aux, *_bgrad, bgrada, bgradb) need matmul_with_aux (InvalidArgument here).
CUPLAN_API Tensor matmul(TensorRef a, TensorRef b, MatmulOptions options = {});

/// The workspace_size() a Matmul over these operands and options would report after plan(plan_options), without
/// making one: the same validation (the same errors), then cuBLASLt's heuristic choice on CUDA (no memory is
/// allocated, nothing is enqueued), 0 on the CPU. Size an external work area (WorkAreaPolicy::external) with it.
CUPLAN_API std::size_t estimate_workspace_size(TensorRef a, TensorRef b, const MatmulOptions& options = {},
                                               const MatmulPlanOptions& plan_options = {});
/// As matmul, also returning the epilog's aux output and bias gradient.
CUPLAN_API MatmulResult matmul_with_aux(TensorRef a, TensorRef b, MatmulOptions options = {});

/// \name Names of the matmul enums
/// @{

/// Names for messages and logs, e.g. "gelu_bias", "tf32".
CUPLAN_API const char* to_string(Epilog epilog) noexcept;
CUPLAN_API const char* to_string(Compute compute) noexcept;
/// @}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
