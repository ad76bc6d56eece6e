// SPDX-License-Identifier: Apache-2.0
#pragma once
// Real-to-real transforms (docs/r2r.md): discrete cosine and sine transforms of types I to IV, with scipy.fft's
// names, definitions and normalizations. The class form RealTransform (plan once, execute many times, with the
// stream contract of docs/streams.md, per-axis kinds for mixed boundary conditions) and the function forms dct,
// idct, dst, idst (one axis) and dctn, idctn, dstn, idstn (several axes) backed by the shared plan cache.
// CUDA execution runs one fused cuFFTDx kernel per axis where it applies, else cuFFT with one reordering pass before
// and one twiddle pass after the axis (RealTransformOptions::route); CPU execution uses FFTW's r2r plans
// (REDFT00/10/01/11, RODFT00/10/01/11).

#include <cstddef>
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

/// The transform of one axis, as scipy.fft and FFTW define it (docs/r2r.md): dct1 is FFTW's REDFT00, dct2 REDFT10,
/// dct3 REDFT01, dct4 REDFT11, dst1 RODFT00, dst2 RODFT10, dst3 RODFT01, dst4 RODFT11.
enum class R2RKind { dct1, dct2, dct3, dct4, dst1, dst2, dst3, dst4 };

/// scipy.fft's `norm`. `backward`: the forward transform is unscaled and the inverse scaled by 1/N'; `forward`: the
/// reverse; `ortho`: both scaled by 1/sqrt(N'). N' is the logical length of each axis (2(n-1) for DCT-I, 2(n+1) for
/// DST-I, 2n otherwise), multiplied over the axes.
enum class R2RNorm { backward, ortho, forward };

/// Options of a RealTransform (class form). An aggregate: name the fields you set, `{.kinds = {R2RKind::dct2,
/// R2RKind::dst2}}`; new fields are appended at the end.
struct RealTransformOptions {
  /// Axes to transform (1 to 3, negative counts from the end, each once). Empty: the last min(ndim, 3) axes, or as
  /// many last axes as `kinds` names.
  std::vector<int> axes{};
  /// The kind of each axis, in the order of `axes`; one entry applies to every axis. Empty: DCT-II everywhere.
  std::vector<R2RKind> kinds{};
  /// Scaling (see R2RNorm).
  R2RNorm norm = R2RNorm::backward;
  /// scipy's `orthogonalize`: scale the first/last input and output terms so that, with R2RNorm::ortho, each
  /// axis's matrix is orthogonal (docs/r2r.md). Empty: true exactly when norm is ortho, as in scipy.
  std::optional<bool> orthogonalize{};
  /// Write the result over the operand (scipy's overwrite_x, but guaranteed).
  bool inplace = false;
  /// Where the transform runs (see Execution).
  Execution execution{};
  /// When calls return (see Blocking).
  Blocking blocking = Blocking::automatic;
  /// Default stream of every phase of the class form and the stream of the function forms; empty: the current
  /// stream at each call (docs/streams.md, "One rule for every phase").
  std::optional<StreamRef> stream{};
  /// Events the first phase waits for.
  EventList after{};
  /// FFTW planning effort for CPU execution; ignored by cuFFT.
  Planning planning = Planning::estimate;
  /// CUDA execution of device operands: an execute whose pointers and direction came among the last few calls is
  /// captured once as a CUDA graph and then replayed (one launch instead of the passes and cuFFT calls of every
  /// axis). Same work, same stream order; false enqueues every call directly. The function forms always replay.
  bool graph_replay = true;
  /// Function forms: checked like every operation's planning mode (see PlanningMode), but a cuFFT-based call plans
  /// before it returns in either mode: cuFFT's plan creation waits for the whole device (docs/streams.md).
  PlanningMode planning_mode = PlanningMode::blocking;
  /// Where the device work area (cuFFT's areas and the row buffers of the passes, workspace_size() bytes) comes
  /// from (see WorkAreaPolicy): automatic is `owned` for RealTransform and `shared` for the function forms. CPU
  /// execution has none (an external buffer is refused there).
  WorkAreaPolicy work_area = WorkAreaPolicy::automatic;
  /// The caller's buffer for WorkAreaPolicy::external: contiguous device memory on the transform's device, 256-byte
  /// aligned, apart from the operand and `out`, at least workspace_size() bytes. It must stay valid while the
  /// object can run.
  std::optional<TensorView> work_area_buffer{};
  /// How each axis runs on CUDA (docs/r2r.md, "Route choice"):
  /// - `automatic`: cuplan's fused kernel (cuFFTDx, compiled ahead of time: one pass per axis, the reordering and
  ///   twiddles inlined) on every axis where it applies (contiguous in the axis's source and result, an FFT length
  ///   among CUPLAN_FUSED_FFT_LENGTHS, type 4 of even length, a build with MathDx, a device the kernels were built
  ///   for with the shared memory they need), the passes (pre-pass, cuFFT, post-pass) on the others; never an error;
  /// - `fused`: the same choice, but NotSupported naming each axis and why when no axis qualifies (and naming the
  ///   device when it cannot run the kernels);
  /// - `cufft`: the passes on every axis.
  /// CPU execution runs FFTW whatever the value, except `fused`, which is NotSupported there. describe() names the
  /// route of each axis and, for an axis on the passes under `automatic` or `fused`, why it is not fused. The choice
  /// follows from the operand's layout, the kinds, the build and the device's limits, made at construction; only a
  /// device the build holds no kernel code for moves an axis to the passes later, at plan().
  FFTRoute route = FFTRoute::automatic;
};

/// Options of one RealTransform::execute call.
struct RealTransformExecuteOptions {
  /// forward (the default) runs each axis's kind; inverse runs its inverse (dct2's is idct of type 2, i.e. a scaled
  /// DCT-III), so that forward then inverse returns the operand for every norm and orthogonalize.
  Direction direction = Direction::forward;
  /// Stream of this call; empty: the stream of RealTransformOptions::stream, else the current stream.
  std::optional<StreamRef> stream{};
  /// Events this call's work waits for.
  EventList after{};
  /// Release the device workspace at the end of this call (stream-ordered); it is allocated again by the next
  /// execute.
  bool release_workspace = false;
  /// Write the result here instead of a new Tensor (shape, dtype and strides of result_shape(), result_dtype() and
  /// result_strides(), in the memory space of the operand). The returned Tensor then aliases it. A Tensor given here
  /// is ordered as every cuplan Tensor is (its last write and reads on other streams, docs/streams.md); a TensorView is
  /// borrowed, and its other users are yours to order.
  std::optional<TensorRef> out{};
};

}  // namespace CUPLAN_ABI_NAMESPACE
namespace detail {
class RealTransformImpl;
}  // namespace detail
inline namespace CUPLAN_ABI_NAMESPACE {

/// A planned real-to-real transform over one operand layout. Move-only. Phases (plan, execute, reset_operand) may
/// run on different streams: each waits for the object's previous phase with an event, as for FFT. The members
/// shared by every planned operation are described in cuplan/operation_members.hpp. For a RealTransform: plan()
/// creates the cuFFT or FFTW plans; in place, execute's result is the operand; the result has the operand's shape
/// and dtype, and row-major strides (the operand's in place); workspace_size() counts device workspace (0 on the
/// CPU); describe() names the kinds, precision, axes, shape, norm, backend and the algorithm of each axis.
class CUPLAN_API RealTransform {
 public:
  /// Validates the operand and options (dtype f32 or f64, axes, kinds, lengths valid for each kind); no GPU work.
  explicit RealTransform(TensorRef operand, RealTransformOptions options = {});
  CUPLAN_OPERATION_MEMBERS(RealTransform, RealTransformExecuteOptions);
  CUPLAN_OPERATION_QUERIES;

  /// The kind of each transformed axis (forward direction), in the order of axes().
  const std::vector<R2RKind>& kinds() const;
  /// The object's lifecycle, for logs: "live", "freed" (free() was called) or "moved-from". Never throws; the
  /// other members throw StateError unless it is "live".
  std::string_view state() const noexcept;

 private:
  std::unique_ptr<detail::RealTransformImpl> impl_;
};

/// Options of the one-axis function forms dct, idct, dst, idst: scipy.fft's arguments (`n` and `workers` aside:
/// pad or crop the operand yourself; Execution::cpu(threads) sets the threads).
struct R2ROptions {
  /// 1 to 4.
  int type = 2;
  /// The axis to transform (negative counts from the end).
  int axis = -1;
  /// scipy's `norm` (see R2RNorm).
  R2RNorm norm = R2RNorm::backward;
  /// scipy's `orthogonalize`; empty: true exactly when norm is ortho.
  std::optional<bool> orthogonalize{};
  /// Write the result over the operand (scipy's overwrite_x, but guaranteed).
  bool inplace = false;
  /// Where the transform runs (see Execution; Execution::cpu(threads) plays scipy's `workers`).
  Execution execution{};
  /// When the call returns (see Blocking).
  Blocking blocking = Blocking::automatic;
  /// The call's stream; empty: the current stream.
  std::optional<StreamRef> stream{};
  /// Events the call's work waits for.
  EventList after{};
  /// FFTW planning effort for CPU execution; ignored by cuFFT.
  Planning planning = Planning::estimate;
  /// Function forms: checked like every operation's planning mode (see PlanningMode), but a cuFFT-based call plans
  /// before it returns in either mode: cuFFT's plan creation waits for the whole device (docs/streams.md).
  PlanningMode planning_mode = PlanningMode::blocking;
  /// Where the cached plan's device work area comes from (see WorkAreaPolicy and RealTransformOptions::work_area):
  /// automatic is `shared` here: one area per device and stream, shared with every plan that runs there.
  WorkAreaPolicy work_area = WorkAreaPolicy::automatic;
  /// The caller's buffer for WorkAreaPolicy::external (as RealTransformOptions::work_area_buffer).
  std::optional<TensorView> work_area_buffer{};
  /// How each axis runs on CUDA (see RealTransformOptions::route).
  FFTRoute route = FFTRoute::automatic;
};

/// Options of the several-axes function forms dctn, idctn, dstn, idstn (scipy.fft's arguments, `s` and `workers`
/// aside).
struct R2RNOptions {
  /// 1 to 4, the same on every axis (RealTransform takes a kind per axis).
  int type = 2;
  /// Axes to transform (1 to 3). Empty: every axis, as in scipy (at most 3).
  std::vector<int> axes{};
  /// scipy's `norm` (see R2RNorm).
  R2RNorm norm = R2RNorm::backward;
  /// scipy's `orthogonalize`; empty: true exactly when norm is ortho.
  std::optional<bool> orthogonalize{};
  /// Write the result over the operand (scipy's overwrite_x, but guaranteed).
  bool inplace = false;
  /// Where the transform runs (see Execution; Execution::cpu(threads) plays scipy's `workers`).
  Execution execution{};
  /// When the call returns (see Blocking).
  Blocking blocking = Blocking::automatic;
  /// The call's stream; empty: the current stream.
  std::optional<StreamRef> stream{};
  /// Events the call's work waits for.
  EventList after{};
  /// FFTW planning effort for CPU execution; ignored by cuFFT.
  Planning planning = Planning::estimate;
  /// Function forms: checked like every operation's planning mode (see PlanningMode), but a cuFFT-based call plans
  /// before it returns in either mode: cuFFT's plan creation waits for the whole device (docs/streams.md).
  PlanningMode planning_mode = PlanningMode::blocking;
  /// Where the cached plan's device work area comes from (see WorkAreaPolicy and RealTransformOptions::work_area):
  /// automatic is `shared` here: one area per device and stream, shared with every plan that runs there.
  WorkAreaPolicy work_area = WorkAreaPolicy::automatic;
  /// The caller's buffer for WorkAreaPolicy::external (as RealTransformOptions::work_area_buffer).
  std::optional<TensorView> work_area_buffer{};
  /// How each axis runs on CUDA (see RealTransformOptions::route).
  FFTRoute route = FFTRoute::automatic;
};

/// \name Function forms (scipy.fft.dct, idct, dst, idst, dctn, idctn, dstn, idstn)
/// @{
CUPLAN_API Tensor dct(TensorRef x, R2ROptions options = {});
CUPLAN_API Tensor idct(TensorRef x, R2ROptions options = {});
CUPLAN_API Tensor dst(TensorRef x, R2ROptions options = {});
CUPLAN_API Tensor idst(TensorRef x, R2ROptions options = {});
CUPLAN_API Tensor dctn(TensorRef x, R2RNOptions options = {});
CUPLAN_API Tensor idctn(TensorRef x, R2RNOptions options = {});
CUPLAN_API Tensor dstn(TensorRef x, R2RNOptions options = {});
CUPLAN_API Tensor idstn(TensorRef x, R2RNOptions options = {});
/// The same, writing into `out` (shape, dtype and row-major strides of the result, memory space of `x`).
CUPLAN_API void dct(TensorRef x, TensorRef out, R2ROptions options = {});
CUPLAN_API void idct(TensorRef x, TensorRef out, R2ROptions options = {});
CUPLAN_API void dst(TensorRef x, TensorRef out, R2ROptions options = {});
CUPLAN_API void idst(TensorRef x, TensorRef out, R2ROptions options = {});
CUPLAN_API void dctn(TensorRef x, TensorRef out, R2RNOptions options = {});
CUPLAN_API void idctn(TensorRef x, TensorRef out, R2RNOptions options = {});
CUPLAN_API void dstn(TensorRef x, TensorRef out, R2RNOptions options = {});
CUPLAN_API void idstn(TensorRef x, TensorRef out, R2RNOptions options = {});
/// @}

/// \name Names of the real-to-real enums
/// @{
/// "dct2", "dst4", ...
CUPLAN_API std::string_view to_string(R2RKind kind);
/// "backward", "ortho", "forward".
CUPLAN_API std::string_view to_string(R2RNorm norm);
/// @}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
