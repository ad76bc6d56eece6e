// SPDX-License-Identifier: Apache-2.0
// CUDA backend of RealTransform (cufft_r2r.hpp).

#include "r2r/cufft/cufft_r2r.hpp"

#include <cufft.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "base/cuda_check.hpp"
#include "base/error_context.hpp"
#include "base/log.hpp"
#include "cuplan/config.hpp"
#include "cuplan/errors.hpp"
#include "r2r/cufft/cufft_status.hpp"
#include "r2r/cufft/fused_r2r_launch.hpp"
#include "r2r/cufft/r2r_kernels.hpp"
#include "r2r/fused_rule.hpp"

namespace cuplan::detail {
namespace {

std::size_t round_up(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

cufftType cufft_type(R2RFftType type, bool dp) {
  switch (type) {
    case R2RFftType::r2c:
      return dp ? CUFFT_D2Z : CUFFT_R2C;
    case R2RFftType::c2r:
      return dp ? CUFFT_Z2D : CUFFT_C2R;
    case R2RFftType::c2c:
      break;
  }
  return dp ? CUFFT_Z2Z : CUFFT_C2C;
}

// The rows of axis `axis`'s pass: the other axes of extent > 1, outermost first.
R2RRows rows_of(const R2RDecision& d, int axis, const Strides& src, const Strides& dst) {
  R2RRows r;
  r.rows = 1;
  for (int a = 0; a < d.shape.size(); ++a) {
    if (a == axis || d.shape[a] == 1) continue;
    r.digit[r.dims++] = {d.shape[a], src[a], dst[a]};
    r.rows *= d.shape[a];
  }
  return r;
}

// One cuFFT execution, `exec` named `call` in a failure's message (with the fault-injection site every check has).
template <class In, class Out, class... Sign>
void exec_checked(cufftResult (*exec)(cufftHandle, In*, Out*, Sign...), const char* call, cufftHandle handle, void* a,
                  void* b, Sign... sign) {
  check_r2r_cufft(fault::inject(fault::Site::library)
                      ? CUFFT_INTERNAL_ERROR
                      : exec(handle, static_cast<In*>(a), static_cast<Out*>(b), sign...),
                  call, {__FILE__, __LINE__});
}

// The cuFFT call of an axis plan from `a` into `b`: its transform type in the plan's precision (C2C runs forward: the
// passes around it make every kind).
void exec_axis_fft(cufftHandle handle, R2RFftType type, bool dp, void* a, void* b) {
  switch (type) {
    case R2RFftType::r2c:
      return dp ? exec_checked(cufftExecD2Z, "cufftExecD2Z", handle, a, b)
                : exec_checked(cufftExecR2C, "cufftExecR2C", handle, a, b);
    case R2RFftType::c2r:
      return dp ? exec_checked(cufftExecZ2D, "cufftExecZ2D", handle, a, b)
                : exec_checked(cufftExecC2R, "cufftExecC2R", handle, a, b);
    case R2RFftType::c2c:
      return dp ? exec_checked(cufftExecZ2Z, "cufftExecZ2Z", handle, a, b, CUFFT_FORWARD)
                : exec_checked(cufftExecC2C, "cufftExecC2C", handle, a, b, CUFFT_FORWARD);
  }
}

// Destroys a plan where no error can be raised (a destructor, or a failed plan() unwinding): a failure is logged.
void destroy_logged(cufftHandle handle) noexcept {
  const cufftResult status = cufftDestroy(handle);
  if (status != CUFFT_SUCCESS)
    log(LogLevel::warning, "RealTransform: cufftDestroy failed with {} (ignored while releasing a plan)",
        r2r_cufft_status_name(status));
}

// The fused kernels of this build, as the rule sees them.
FusedR2RAvailability built_fused_kernels() {
  FusedR2RAvailability available;
  available.mathdx = CUPLAN_HAS_FUSED_FFT != 0;
  for (const fused_r2r::FusedR2RLauncher* launcher : fused_r2r::launchers())
    if (std::find(available.lengths.begin(), available.lengths.end(), launcher->length) == available.lengths.end())
      available.lengths.push_back(launcher->length);
  return available;
}

}  // namespace

CufftR2R::CufftR2R(const R2RDecision& decision, int device, FFTRoute route, const Strides& first_source_strides,
                   const char* who)
    : decision_(decision), device_(device), route_(route), who_(who) {
  std::int64_t numel = 1;
  for (int a = 0; a < decision.shape.size(); ++a) numel *= decision.shape[a];
  const FusedR2RAvailability available = built_fused_kernels();
  for (Direction direction : {Direction::forward, Direction::inverse}) {
    std::vector<AxisPlan>& plans = direction == Direction::forward ? forward_ : inverse_;
    FusedAxes fused = fused_axes(decision, direction, route, first_source_strides, available, who);
    for (std::size_t i = 0; i < decision.transformed.size(); ++i) {
      AxisPlan p;
      p.algorithm = choose_algorithm(decision.kind_for(i, direction), decision.transformed[i].n);
      p.rows = numel / decision.transformed[i].n;
      if (fused.fused[i]) {
        p.fused = fused_r2r::find_launcher(p.algorithm.fft, decision.dtype == f64, p.algorithm.fft_length);
        if (p.fused == nullptr)  // the rule read the same table: a mismatch is a bug, not bad input
          throw Error(fmt::format("{}: internal error: the fused {} kernel of length {} is missing from the table", who,
                                  r2r_fft_type_name(p.algorithm.fft), p.algorithm.fft_length));
        // automatic: a device whose shared memory per block is short of the kernel's keeps the passes (an explicit
        // `fused` is refused by plan(), naming the device).
        if (route == FFTRoute::automatic) fused.not_fused[i] = shared_memory_refusal(p);
        if (fused.not_fused[i].empty()) {
          plans.push_back(p);
          continue;
        }
        p.fused = nullptr;
      }
      use_passes(p, i, std::move(fused.not_fused[i]));
      plans.push_back(std::move(p));
    }
  }
}

CufftR2R::~CufftR2R() {
  for (std::vector<AxisPlan>* plans : {&forward_, &inverse_})
    for (AxisPlan& p : *plans)
      if (p.handle) destroy_logged(static_cast<cufftHandle>(*p.handle));
}

void CufftR2R::plan() {
  if (planned_) return;
  // The fused axes first: their refusal (shared memory, no code for the device) then leaves no cuFFT plan behind.
  // automatic keeps the passes on such a device instead (the axes below then get their cuFFT plans).
  for (std::vector<AxisPlan>* plans : {&forward_, &inverse_})
    for (std::size_t i = 0; i < plans->size(); ++i) {
      AxisPlan& p = (*plans)[i];
      if (p.rows == 0 || p.fused == nullptr) continue;
      FusedRefusal refusal = prepare_fused(p);
      if (refusal.why.empty()) continue;
      if (route_ != FFTRoute::automatic)
        throw NotSupported(fmt::format("{}: route fused: {}; {}", who_, refusal.why, refusal.remedy));
      p.fused = nullptr;
      use_passes(p, i, std::move(refusal.why));
    }
  const bool dp = decision_.dtype == f64;
  for (std::vector<AxisPlan>* plans : {&forward_, &inverse_}) {
    for (AxisPlan& p : *plans) {
      // An axis a failed plan() made already keeps its plan: a second plan() makes only the others.
      if (p.rows == 0 || p.fused != nullptr || p.handle) continue;
      // Owned here until the plan is made: a failing call below destroys it, so no failure leaks a handle.
      struct MadeHandle {
        cufftHandle handle = 0;
        bool created = false;
        ~MadeHandle() {
          if (created) destroy_logged(handle);
        }
      } made;
      CUPLAN_LIBRARY_FAULT_POINT("cuFFT", "cufftCreate");
      CUPLAN_R2R_CUFFT_CHECK(cufftCreate(&made.handle));
      made.created = true;
      CUPLAN_R2R_CUFFT_CHECK(cufftSetAutoAllocation(made.handle, 0));
      const AxisAlgorithm& al = p.algorithm;
      long long n = al.fft_length;
      // Distances in elements of each side's type (complex sides count complex values): rows one after another,
      // or interleaved (element j of row r at j * rows + r).
      long long idist = al.fft == R2RFftType::r2c ? al.a_scalars : al.a_scalars / 2;
      long long odist = al.fft == R2RFftType::c2r ? al.b_scalars : al.b_scalars / 2;
      // The storage length of a row on each side (rank 1: cuFFT indexes by strides and distances alone, but asks
      // for at least the transform's length here).
      long long inembed = idist, onembed = odist;
      long long istride = 1, ostride = 1;
      if (p.interleaved) {
        istride = ostride = p.rows;
        idist = odist = 1;
      }
      std::size_t work = 0;
      CUPLAN_R2R_CUFFT_CHECK(cufftMakePlanMany64(made.handle, 1, &n, &inembed, istride, idist, &onembed, ostride, odist,
                                                 cufft_type(al.fft, dp), p.rows, &work));
      p.handle = static_cast<int>(made.handle);
      made.created = false;
      p.work_bytes = work;
      work_bytes_ = std::max(work_bytes_, round_up(work));
    }
  }
  planned_ = true;
}

void CufftR2R::use_passes(AxisPlan& p, std::size_t i, std::string not_fused) {
  const std::size_t scalar = decision_.dtype.size();
  p.interleaved = decision_.out_strides[decision_.transformed[i].axis] != 1 && p.rows > 1;
  p.not_fused = std::move(not_fused);
  a_bytes_ = std::max(a_bytes_, round_up(static_cast<std::size_t>(p.rows * p.algorithm.a_scalars) * scalar));
  b_bytes_ = std::max(b_bytes_, round_up(static_cast<std::size_t>(p.rows * p.algorithm.b_scalars) * scalar));
}

std::string CufftR2R::shared_memory_refusal(const AxisPlan& p) const {
  if (const std::optional<int> shared = p.fused->block.shared_memory_short_on(device_))
    return fmt::format("the fused {} kernel of length {} needs {} bytes of shared memory per block, cuda:{} allows {}",
                       r2r_fft_type_name(p.algorithm.fft), p.fused->length, p.fused->block.shared_bytes, device_,
                       *shared);
  return {};
}

CufftR2R::FusedRefusal CufftR2R::prepare_fused(const AxisPlan& p) const {
  if (std::string why = shared_memory_refusal(p); !why.empty()) return {std::move(why), "use route cufft"};
  const cudaError_t status = p.fused->block.prepare();
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction) {
    (void)cudaGetLastError();  // the failed attribute call is not a sticky error: clear it
    int major = 0, minor = 0;
    CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_));
    CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_));
    return {fmt::format("the build's fused kernels hold no code for cuda:{} (sm_{}{})", device_, major, minor),
            "add it to CMAKE_CUDA_ARCHITECTURES or use route cufft"};
  }
  CUPLAN_CUDA_CHECK(status);
  return {};
}

std::size_t CufftR2R::workspace_size() const noexcept {
  return planned_ ? a_bytes_ + b_bytes_ + work_bytes_ : 0;
}

void CufftR2R::execute(Direction direction, const void* in, const Strides& in_strides, void* out, void* workspace,
                       cudaStream_t s) {
  const R2RDecision& d = decision_;
  const bool dp = d.dtype == f64;
  auto* base = static_cast<unsigned char*>(workspace);
  void* a = base;
  void* b = base + a_bytes_;
  void* work = base + a_bytes_ + b_bytes_;
  const std::vector<AxisPlan>& plans = direction == Direction::forward ? forward_ : inverse_;
  bool input_ready = false;  // the previous axis's post-pass wrote this axis's FFT input (bridged)
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const AxisPlan& p = plans[i];
    if (p.rows == 0) return;
    const int axis = d.transformed[i].axis;
    // The first axis reads the operand, every later one the result the previous axis wrote.
    const bool first_axis = i == 0;
    const Strides& src_strides = first_axis ? in_strides : d.out_strides;
    const EdgeScaling edges = d.edges(i, direction);
    const double scale = i + 1 == plans.size() ? d.scale(direction) : 1.0;
    if (p.fused != nullptr) {
      // One kernel: load with the reordering and input factors, FFT, store with the twiddle and output factors.
      const fused_r2r::FusedR2RArgs args{.algorithm = p.algorithm,
                                         .rows = rows_of(d, axis, src_strides, d.out_strides),
                                         .src = first_axis ? in : out,
                                         .dst = out,
                                         .pre_first = edges.pre_first,
                                         .pre_last = edges.pre_last,
                                         .post_first = edges.post_first,
                                         .post_last = edges.post_last,
                                         .scale = scale};
      CUPLAN_CUDA_CHECK(p.fused->launch(args, s));
      continue;
    }
    R2RPassArgs args;
    args.algorithm = p.algorithm;
    args.rows = rows_of(d, axis, src_strides, d.out_strides);
    args.double_precision = dp;
    args.src = first_axis ? in : out;
    args.src_axis_stride = src_strides[axis];
    args.dst = out;
    args.dst_axis_stride = d.out_strides[axis];
    args.fft_in = a;
    args.fft_out = b;
    args.interleaved = p.interleaved;
    args.first = edges.pre_first;
    args.last = edges.pre_last;
    if (!input_ready) CUPLAN_CUDA_CHECK(launch_r2r_pre_pass(args, s));
    const auto handle = static_cast<cufftHandle>(*p.handle);
    CUPLAN_LIBRARY_FAULT_POINT("cuFFT", "cufftExec");
    CUPLAN_R2R_CUFFT_CHECK(cufftSetStream(handle, s));
    CUPLAN_R2R_CUFFT_CHECK(cufftSetWorkArea(handle, work));
    exec_axis_fft(handle, p.algorithm.fft, dp, a, b);
    args.first = edges.post_first;
    args.last = edges.post_last;
    args.scale = scale;
    input_ready = bridges_to_next(plans, i);
    if (!input_ready) {
      CUPLAN_CUDA_CHECK(launch_r2r_post_pass(args, s));
      continue;
    }
    // The next axis's pre-pass is a permutation: this post-pass stores into its FFT input (`a`, free again now that
    // this axis's FFT has read it) and neither the intermediate result nor the next pre-pass's pass over it is made.
    const AxisPlan& next = plans[i + 1];
    const int next_axis = d.transformed[i + 1].axis;
    const EdgeScaling next_edges = d.edges(i + 1, direction);
    const R2RBridgeLayout layout =
        r2r_bridge_layout(d.shape.begin(), d.shape.size(), axis, next_axis, next.interleaved, next.algorithm.a_scalars);
    args.rows = layout.rows;
    args.dst = a;
    args.dst_axis_stride = layout.axis_stride;
    const R2RBridge bridge{.next_n = next.algorithm.n,
                           .next_sine = next.algorithm.sine,
                           .next_first = next_edges.pre_first,
                           .next_last = next_edges.pre_last,
                           .column_stride = layout.column_stride};
    CUPLAN_CUDA_CHECK(launch_r2r_post_bridge_pass(args, bridge, s));
  }
}

bool CufftR2R::bridges_to_next(const std::vector<AxisPlan>& plans, std::size_t i) {
  // Both axes on the passes, the next one's pre-pass the type-II reordering (a permutation with signs), and the
  // axis itself of type II too: the bridge kernel is compiled for that pair only (r2r_kernels.cu).
  if (i + 1 >= plans.size()) return false;
  const AxisPlan& p = plans[i];
  const AxisPlan& next = plans[i + 1];
  return p.fused == nullptr && next.fused == nullptr && next.rows > 0 &&
         p.algorithm.algorithm == R2RAlgorithm::type2_reorder &&
         next.algorithm.algorithm == R2RAlgorithm::type2_reorder;
}

std::string CufftR2R::algorithms(Direction direction) const {
  std::string text;
  const std::vector<AxisPlan>& plans = direction == Direction::forward ? forward_ : inverse_;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const AxisPlan& p = plans[i];
    text += fmt::format("{}axis {} {}: ", i == 0 ? "" : "; ", decision_.transformed[i].axis,
                        to_string(decision_.kind_for(i, direction)));
    text += p.fused != nullptr
                ? fmt::format("fused cuFFTDx kernel ({} {})", r2r_fft_type_name(p.algorithm.fft), p.fused->length)
                : fmt::format("{} (passes around cuFFT{}{})", algorithm_summary(p.algorithm.algorithm),
                              p.not_fused.empty() ? "" : ", not fused: ", p.not_fused);
  }
  return text;
}

}  // namespace cuplan::detail
