// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fast Fourier transforms (docs/fft.md): the class form FFT (plan once, execute many times, with the stream
// contract of docs/streams.md) and the function forms fft, ifft, rfft, irfft backed by the shared plan cache.
// CUDA execution uses cuFFT; CPU execution uses FFTW.

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
#include "cuplan/fft_callbacks.hpp"
#include "cuplan/operation_members.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// Complex-to-complex, real-to-complex (forward only) or complex-to-real (inverse only).
enum class FFTType { c2c, r2c, c2r };
/// Forward is exp(-2 pi i jk/n), inverse exp(+2 pi i jk/n).
enum class Direction { forward, inverse };
/// Length of the last transformed axis of a C2R result: even gives 2(m-1), odd gives 2(m-1)+1 for m inputs.
enum class Parity { even, odd };
/// `natural`: the result is dense row-major over its logical shape. `optimized`: the result takes the dense layout
/// the transform computes into, which avoids the internal copy that rearranges a result whose natural layout does
/// not nest like the operand (e.g. a column-major operand); where no such copy is needed it equals natural.
enum class ResultLayout { natural, optimized };
/// Scaling of the result. `none` never scales (like cuFFT); `inverse` scales the inverse transform by 1/N (NumPy
/// "backward"); `forward` scales the forward transform by 1/N; `ortho` scales both ways by 1/sqrt(N).
/// N is the product of the logical transform lengths.
enum class Normalization { none, inverse, forward, ortho };

/// How hard FFTW searches for a fast plan (CPU execution): `estimate` picks one by heuristics at once; `measure`
/// and `patient` time candidates when a plan is made (seconds for large sizes), unless FFTW's wisdom already
/// holds the problem (tuning::load restores it; docs/fft.md, "Planning effort and saved wisdom").
enum class Planning { estimate, measure, patient };

/// How a transform runs on CUDA (docs/fft.md, "Route choice"):
/// - `automatic`: cuFFT, for now; a transform with a prolog or epilog is to run as cuplan's fused kernel where it
///   applies once that route has run through the whole GPU suite;
/// - `fused`: cuplan's own kernel (cuFFTDx, compiled at plan time with the prolog and epilog inlined, or linked in
///   at plan time when given as LTO-IR), where it applies (one axis, contiguous in operand and result, a length and
///   precision cuFFTDx supports on the device, callbacks given as CUDA source or LTO-IR, a build with MathDx);
///   NotSupported naming the reason elsewhere;
/// - `cufft`: cuFFT, with the callbacks linked in as cuFFT LTO callbacks.
/// CPU execution runs FFTW whatever the value, except `fused`, which is NotSupported there.
enum class FFTRoute : std::uint8_t { automatic, fused, cufft };

/// Options of an FFT (class form) and of the function forms fft, ifft, rfft, irfft. An aggregate: name the fields
/// you set, `{.axes = {0, 1}, .stream = s}`; new fields are appended at the end.
struct FFTOptions {
  /// Axes to transform (1 to 3, negative counts from the end). Empty: the last min(ndim, 3) axes. For R2C and
  /// C2R the last entry is the axis that is halved (R2C) or restored (C2R).
  std::vector<int> axes{};
  /// C2R: whether the restored last axis has even or odd length (see Parity).
  Parity last_axis_parity = Parity::even;
  /// Write the result over the operand (C2C: same layout; R2C/C2R: the real side padded to 2(n/2+1) values).
  bool inplace = false;
  /// Layout of the result (see ResultLayout).
  ResultLayout result_layout = ResultLayout::natural;
  /// Scaling of the result (see Normalization).
  Normalization normalization = Normalization::none;
  /// Where the transform runs (see Execution).
  Execution execution{};
  /// When calls return (see Blocking).
  Blocking blocking = Blocking::automatic;
  /// Default stream of every phase of the class form (plan, execute, reset_operand) and the stream of the function
  /// forms; empty: the current stream at each call (docs/streams.md, "One rule for every phase").
  std::optional<StreamRef> stream{};
  /// Events the first phase waits for.
  EventList after{};
  /// Transform type; empty: C2C for a complex operand, R2C for a real one.
  std::optional<FFTType> fft_type{};
  /// CUDA execution: an execute whose pointers and direction came among the last few calls is captured once as a
  /// CUDA graph and then replayed (one launch instead of the cuFFT calls and the scaling kernel). Same work, same
  /// stream order; false enqueues every call directly (docs/fft.md, "Graph replay").
  bool graph_replay = true;
  /// CUDA execution of a host operand: the most device memory (bytes) one call may hold for it; the operand is
  /// transformed chunk by chunk along its batch axes within this limit (docs/staging.md). 0: half the device memory
  /// free when the object plans.
  std::size_t device_memory_limit = 0;
  /// FFTW planning effort for CPU execution; ignored by cuFFT.
  Planning planning = Planning::estimate;
  /// Runs on each element the transform loads, in place of a separate pass before it (docs/fft.md, "Callbacks"):
  /// CUDA source or LTO-IR for CUDA execution, a host callable for CPU execution. Empty: none.
  FFTCallback prolog{};
  /// Runs on each element the transform stores, in place of a separate pass after it (before the normalization's
  /// scaling, which stays a pass of its own). Empty: none.
  FFTCallback epilog{};
  /// How the transform runs on CUDA (see FFTRoute); describe() names the route taken.
  FFTRoute route = FFTRoute::automatic;
  /// Function forms: checked like every operation's planning mode (see PlanningMode), but a cuFFT-based call plans
  /// before it returns in either mode: cuFFT's plan creation waits for the whole device (docs/streams.md).
  /// (`planning` above is FFTW's planning effort.)
  PlanningMode planning_mode = PlanningMode::blocking;
  /// Where cuFFT's work area comes from (see WorkAreaPolicy): automatic is `owned` for FFT and `shared` for the
  /// function forms. Operands in device memory only: host operands and CPU execution use staging of their own (an
  /// external buffer is refused there, owned and shared change nothing).
  WorkAreaPolicy work_area = WorkAreaPolicy::automatic;
  /// The caller's buffer for WorkAreaPolicy::external: contiguous device memory on the transform's device, 256-byte
  /// aligned, apart from the operand and `out`, at least workspace_size() bytes (estimate_workspace_size() says how
  /// many before any object exists). It must stay valid while the object can run.
  std::optional<TensorView> work_area_buffer{};
};

/// Options of one FFT::execute call.
struct FFTExecuteOptions {
  /// C2C: forward by default. R2C is always forward and C2R always inverse (a contradicting value is an error).
  std::optional<Direction> direction{};
  /// Stream of this call; empty: the stream of FFTOptions::stream, else the current stream.
  std::optional<StreamRef> stream{};
  /// Events this call's work waits for.
  EventList after{};
  /// Release the workspace at the end of this call (stream-ordered); it is allocated again by the next execute.
  bool release_workspace = false;
  /// Write the result here instead of a new Tensor (shape, dtype and strides of result_shape(), result_dtype() and
  /// result_strides(), in the memory space of the operand). The returned Tensor then aliases it. A Tensor given here
  /// is ordered as every cuplan Tensor is (its last write and reads on other streams, docs/streams.md); a TensorView is
  /// borrowed, and its other users are yours to order.
  std::optional<TensorRef> out{};
  /// A new user data pointer for the prolog, from this call on (no new plan: the callback's caller_info block is
  /// rewritten in stream order). StateError without a prolog.
  std::optional<void*> prolog_data{};
  /// A new user data pointer for the epilog, from this call on. StateError without an epilog.
  std::optional<void*> epilog_data{};
};

}  // namespace CUPLAN_ABI_NAMESPACE
namespace detail {
class FftImpl;
}  // namespace detail
inline namespace CUPLAN_ABI_NAMESPACE {

/// A planned FFT over one operand layout. Move-only. Phases (plan, execute, reset_operand) may run on different
/// streams: each waits for the object's previous phase with an event, so the object's own state never races.
/// The members shared by every planned operation are described in cuplan/operation_members.hpp. For an FFT: plan()
/// creates the cuFFT or FFTW plan; in place, execute's result shares the operand's memory (and its ownership, for an
/// owning Tensor operand: the result keeps that memory alive); free() also releases the staging buffers.
/// result_strides() are row-major unless ResultLayout::optimized chose another layout, or in place; describe()
/// names the type, precision, axes, lengths, batch, layout, copies, backend and workspace.
class CUPLAN_API FFT {
 public:
  /// Validates the operand and options and chooses the layout; no GPU work.
  explicit FFT(TensorRef operand, FFTOptions options = {});
  CUPLAN_OPERATION_MEMBERS(FFT, FFTExecuteOptions);
  CUPLAN_OPERATION_QUERIES;

  /// The transform type (c2c, r2c or c2r) as resolved from the operand and options.
  FFTType type() const;
  /// The object's lifecycle, for logs: "live", "freed" (free() was called) or "moved-from". Never throws; the
  /// other members throw StateError unless it is "live".
  std::string_view state() const noexcept;

 private:
  std::unique_ptr<detail::FftImpl> impl_;
};

/// The workspace_size() an FFT over this operand and options would report after plan(), without making one: the
/// same validation (the same errors), then cuFFT's size for the planned layout (a plan made and destroyed at once,
/// no work area allocated) on CUDA, 0 on the CPU and for host operands. Size an external work area
/// (WorkAreaPolicy::external) with it.
CUPLAN_API std::size_t estimate_workspace_size(TensorRef operand, const FFTOptions& options = {});

/// Forward transform (C2C for a complex operand, R2C for a real one unless options.fft_type says otherwise).
CUPLAN_API Tensor fft(TensorRef x, FFTOptions options = {});
/// Inverse transform: C2C, or C2R when options.fft_type is FFTType::c2r.
CUPLAN_API Tensor ifft(TensorRef x, FFTOptions options = {});
/// Forward real-to-complex transform.
CUPLAN_API Tensor rfft(TensorRef x, FFTOptions options = {});
/// Inverse complex-to-real transform (length of the last axis from options.last_axis_parity).
CUPLAN_API Tensor irfft(TensorRef x, FFTOptions options = {});

/// \name Function forms with an output
/// @{

/// The same, writing into `out` (shape and dtype of the result, memory space of `x`).
CUPLAN_API void fft(TensorRef x, TensorRef out, FFTOptions options = {});
CUPLAN_API void ifft(TensorRef x, TensorRef out, FFTOptions options = {});
CUPLAN_API void rfft(TensorRef x, TensorRef out, FFTOptions options = {});
CUPLAN_API void irfft(TensorRef x, TensorRef out, FFTOptions options = {});
/// @}

/// \name Names of the FFT enums
/// @{

/// The enumerator's name, e.g. "r2c", "inverse", "ortho".
CUPLAN_API std::string_view to_string(FFTType type);
CUPLAN_API std::string_view to_string(Direction direction);
CUPLAN_API std::string_view to_string(Normalization normalization);
CUPLAN_API std::string_view to_string(FFTRoute route);
/// @}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
