// SPDX-License-Identifier: Apache-2.0
#pragma once
// FFT convolution (docs/convolution.md): the class form Convolution (plan once with a kernel, whose spectrum is
// computed once, then execute over many operands, with the stream contract of docs/streams.md) and the function
// form fftconvolve with the modes of scipy.signal.fftconvolve plus circular. CUDA execution: cuFFT forward, a
// product kernel and cuFFT inverse, or a fused kernel of cuplan's own (cuFFTDx) where it applies; CPU execution:
// FFTW with the product inside its chunked loop.

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
#include "cuplan/fft.hpp"
#include "cuplan/operation_members.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// Which part of the linear convolution is returned, per convolved axis of length n with a kernel of length k (the
/// modes of scipy.signal.fftconvolve, plus circular):
/// - `full`: all n + k - 1 values;
/// - `same`: n values, centred on the full result (from index (k - 1) / 2);
/// - `valid`: the |n - k| + 1 values computed without zero padding (from index min(n, k) - 1); on every convolved
///   axis the operand must be at least as long as the kernel, or on every one at most as long;
/// - `circular`: the circular convolution of period n (the kernel, k <= n, padded with zeros to n).
enum class ConvolutionMode : std::uint8_t { full, same, valid, circular };

/// How a convolution runs on CUDA. `automatic`: the fused kernel where it applies and was measured faster (see
/// docs/convolution.md), else separate passes. `fused`: forward FFT, product and inverse FFT in one kernel of cuplan's
/// own (cuFFTDx) along the first convolved axis, with cuFFT on the others in 2D and 3D; NotSupported naming the reason
/// where it cannot apply (always in a build without MathDx, CUPLAN_HAS_FUSED_FFT 0).
/// `separate`: cuFFT forward, a product kernel and cuFFT inverse. CPU execution has one route (FFTW); there `fused`
/// is NotSupported and `separate` is accepted.
enum class ConvolutionRoute : std::uint8_t { automatic, fused, separate };

/// Options of a Convolution (class form) and of fftconvolve. An aggregate: name the fields you set,
/// `{.axes = {-1}, .mode = ConvolutionMode::same}`; new fields are appended at the end.
struct ConvolutionOptions {
  /// Axes to convolve (1 to 3, negative counts from the end). Empty: the last min(ndim, 3) axes. The other axes are
  /// batch axes, along which the kernel has the operand's extent or 1 (then one kernel serves every entry).
  std::vector<int> axes{};
  /// Which part of the convolution is returned (see ConvolutionMode).
  ConvolutionMode mode = ConvolutionMode::full;
  /// CUDA route (see ConvolutionRoute).
  ConvolutionRoute route = ConvolutionRoute::automatic;
  /// Where the convolution runs (see Execution).
  Execution execution{};
  /// When calls return (see Blocking).
  Blocking blocking = Blocking::automatic;
  /// Default stream of every phase of the class form (plan, execute, reset_operand, reset_kernel) and the stream of
  /// the function form; empty: the current stream at each call (docs/streams.md, "One rule for every phase").
  std::optional<StreamRef> stream{};
  /// Events the first phase waits for.
  EventList after{};
  /// FFTW planning effort for CPU execution; ignored on CUDA.
  Planning planning = Planning::estimate;
  /// fftconvolve: checked like every operation's planning mode (see PlanningMode), but the call plans before it
  /// returns in either mode: cuFFT's plan creation waits for the whole device (docs/streams.md).
  PlanningMode planning_mode = PlanningMode::blocking;
  /// Where cuFFT's work area comes from (see WorkAreaPolicy): automatic is `owned` for Convolution and `shared` for
  /// fftconvolve. The padded work buffers and the kernel's spectrum stay the object's own.
  WorkAreaPolicy work_area = WorkAreaPolicy::automatic;
  /// The caller's buffer for WorkAreaPolicy::external: contiguous device memory on the convolution's device,
  /// 256-byte aligned, apart from the operand, the kernel and `out`, of at least work_area_size() bytes (exact;
  /// estimate_work_area_size() says how many before any object exists; plan() names both numbers when it is
  /// smaller). It must stay valid while the object can run.
  std::optional<TensorView> work_area_buffer{};
};

/// Options of one Convolution::execute call.
struct ConvolutionExecuteOptions {
  /// Stream of this call; empty: the stream of ConvolutionOptions::stream, else the current stream.
  std::optional<StreamRef> stream{};
  /// Events this call's work waits for.
  EventList after{};
  /// Release the work buffers at the end of this call (stream-ordered); they are allocated again by the next one.
  bool release_workspace = false;
  /// Write the result here instead of a new Tensor (shape, dtype and strides of result_shape(), result_dtype() and
  /// result_strides(), in the memory space of the operand; no overlap with the operand). The returned Tensor then
  /// aliases it. A Tensor given here is ordered as every cuplan Tensor is (its last write and reads on other streams,
  /// docs/streams.md); a TensorView is borrowed, and its other users are yours to order.
  std::optional<TensorRef> out{};
};

}  // namespace CUPLAN_ABI_NAMESPACE
namespace detail {
class ConvolutionImpl;
}  // namespace detail
inline namespace CUPLAN_ABI_NAMESPACE {

/// A planned convolution of operands of one layout with one kernel. Move-only. Phases (plan, execute,
/// reset_operand, reset_kernel) may run on different streams: each waits for the object's previous phase with an
/// event, so the object's own state never races. The members shared by every planned operation are described in
/// cuplan/operation_members.hpp. For a Convolution: plan() makes the FFT plans and computes the kernel's spectrum
/// (the kernel is read by this phase only: the object keeps its spectrum, not the kernel); execute convolves the
/// operand with the kernel; free() also releases the spectrum. The result's dtype is complex when the operand or
/// the kernel is, its strides dense row-major; workspace_size() counts work buffers and the kernel's spectrum;
/// describe() names the dtypes, shapes, axes, mode, FFT lengths, route (and why not fused), backend and workspace.
class CUPLAN_API Convolution {
 public:
  /// Validates operand, kernel and options and decides the geometry and the route; no GPU work. The kernel has the
  /// operand's rank and dtype precision (real or complex: a complex operand or kernel makes a complex result).
  Convolution(TensorRef operand, TensorRef kernel, ConvolutionOptions options = {});
  CUPLAN_OPERATION_MEMBERS(Convolution, ConvolutionExecuteOptions);
  CUPLAN_OPERATION_QUERIES;

  /// Replaces the kernel by one of the same shape, dtype and memory space class and computes its spectrum (after
  /// plan(); ordered after the object's last phase, and every later execute uses the new spectrum).
  void reset_kernel(TensorRef kernel, std::optional<StreamRef> stream = {});

  /// The mode (see ConvolutionMode).
  ConvolutionMode mode() const;
  /// The route taken: `fused` or `separate` on CUDA, `separate` on the CPU.
  ConvolutionRoute route() const;
  /// The FFT lengths along the convolved axes, in the order of axes(); 1 for an axis where the kernel has length 1,
  /// which needs no transform (there the kernel's value multiplies, as along a batch axis).
  std::vector<std::int64_t> fft_lengths() const;
  /// Bytes of cuFFT's work area as planned: exactly what a WorkAreaPolicy::external buffer must hold (one area
  /// serves the kernel's and the operand's transforms in turn, so it is the largest of their needs). 0 before
  /// plan() and on the CPU. workspace_size() counts more: the work buffers and the kernel's spectrum too.
  std::size_t work_area_size() const;
  /// The object's lifecycle, for logs: "live", "freed" (free() was called) or "moved-from". Never throws; the
  /// other members throw StateError unless it is "live".
  std::string_view state() const noexcept;

 private:
  std::unique_ptr<detail::ConvolutionImpl> impl_;
};

/// The work_area_size() a Convolution over these operands and options would report after plan(), without making
/// one: the same validation (the same errors), then cuFFT's sizes for the planned layouts (plans made and destroyed
/// at once, nothing allocated) on CUDA, 0 on the CPU. Size an external work area (WorkAreaPolicy::external) with it.
CUPLAN_API std::size_t estimate_work_area_size(TensorRef x, TensorRef kernel, const ConvolutionOptions& options = {});

/// Convolves `x` with `kernel` (scipy.signal.fftconvolve; options.mode, default full), backed by the shared plan
/// cache. Each call computes the kernel's spectrum again: for one kernel over many operands use Convolution.
CUPLAN_API Tensor fftconvolve(TensorRef x, TensorRef kernel, ConvolutionOptions options = {});
/// The same, writing into `out` (shape, dtype and dense strides of the result, memory space of `x`).
CUPLAN_API void fftconvolve(TensorRef x, TensorRef kernel, TensorRef out, ConvolutionOptions options = {});

/// \name Names of the convolution enums
/// @{

/// The enumerator's name, e.g. "same", "fused".
CUPLAN_API std::string_view to_string(ConvolutionMode mode);
CUPLAN_API std::string_view to_string(ConvolutionRoute route);
/// @}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
