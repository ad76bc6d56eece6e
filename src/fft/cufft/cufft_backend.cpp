// SPDX-License-Identifier: Apache-2.0
#include "fft/cufft/cufft_backend.hpp"

#include <cufftXt.h>
#include <fmt/ranges.h>

#include <fmt/format.h>
#include <span>
#include <type_traits>

#include "base/cuda_check.hpp"
#include "base/cuda_types.hpp"
#include "base/log.hpp"
#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "fft/cufft/callback_info_kernel.hpp"
#include "fft/cufft/cufft_check.hpp"

namespace cuplan::detail {
static_assert(std::is_same_v<cufftHandle, int>, "CufftPlan keeps its cufftHandle as an int");
namespace {

cudaDataType data_type(DType dtype) {
  const auto type = cuda_data_type(dtype);
  // cuFFT transforms f16/f32/f64 real and complex data; bf16 and fp8 have CUDA types but no cuFFT transforms.
  if (!type || dtype.code() == DTypeCode::bf16 || dtype.is_fp8())
    throw NotSupported(fmt::format("FFT: cuFFT does not transform {} data", dtype.name()));
  return *type;
}

// The planning call on a handle whose auto-allocation is off: cuFFT's work-area size for the layout in `size`.
void make_plan(cufftHandle handle, const LayoutDecision& d, std::size_t& size) {
  const AdvancedLayout& l = d.layout;
  long long n[3], inembed[3], onembed[3];
  for (int k = 0; k < 3; ++k) {
    n[k] = l.n[k];
    inembed[k] = l.inembed[k];
    onembed[k] = l.onembed[k];
  }
  // A dense C2C batch is cuFFT's basic layout: null embeds then make the very plan of cufftPlanMany with defaults
  // (strides 1, distance the product of the lengths), the library's most direct path.
  std::int64_t dense_dist = 1;
  for (int k = 0; k < l.rank; ++k) dense_dist *= l.n[k];
  bool basic = d.type == FFTType::c2c && l.istride == 1 && l.ostride == 1 &&
               (l.batch == 1 || (l.idist == dense_dist && l.odist == dense_dist));
  for (int k = 1; k < l.rank; ++k) basic = basic && l.inembed[k] == l.n[k] && l.onembed[k] == l.n[k];
  const cudaDataType execution_type = data_type(d.in_dtype.complex());
  CUPLAN_CUFFT_CHECK(cufftXtMakePlanMany(handle, l.rank, n, basic ? nullptr : inembed, l.istride, l.idist,
                                         data_type(d.in_dtype), basic ? nullptr : onembed, l.ostride, l.odist,
                                         data_type(d.out_dtype), l.batch, &size, execution_type));
}

}  // namespace

std::size_t cufft_workspace_size(const LayoutDecision& decision, int device) {
  check_cufft_supports(decision);
  DeviceScope scope(Device::cuda(device));
  cufftHandle handle = 0;
  CUPLAN_CUFFT_CHECK(cufftCreate(&handle));
  std::size_t size = 0;
  try {
    CUPLAN_CUFFT_CHECK(cufftSetAutoAllocation(handle, 0));
    make_plan(handle, decision, size);
  } catch (...) {
    (void)cufftDestroy(handle);
    throw;
  }
  CUPLAN_CUFFT_CHECK(cufftDestroy(handle));
  return size;
}

CufftPlan::CufftPlan(const LayoutDecision& d, int device, const CallbackSet* callbacks, std::optional<StreamRef> stream)
    : type_(d.type),
      precision_(d.in_dtype.real()),
      in_element_(d.in_dtype.size()),
      out_element_(d.out_dtype.size()),
      in_offsets_(d.layout.loop_in_offsets),
      out_offsets_(d.layout.loop_out_offsets) {
  const AdvancedLayout& l = d.layout;
  check_cufft_supports(d);
  DeviceScope scope(Device::cuda(device));
  CUPLAN_CUFFT_CHECK(cufftCreate(&handle_));
  created_ = true;
  try {
    CUPLAN_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
    // LTO callbacks go on the handle before the planning call, which links them into the plan's kernels.
    if (callbacks != nullptr) set_callbacks(*callbacks, device, stream.value_or(StreamRef{}));
    try {
      make_plan(handle_, d, workspace_size_);
    } catch (const LibraryError& error) {
      // cuFFT links the callbacks while planning: a failure there is the callbacks' (nvJitLink's log is not
      // returned by cuFFT; the status says which step failed).
      const bool prolog = callback_code_[0] != nullptr, epilog = callback_code_[1] != nullptr;
      if (!(prolog || epilog) || (error.status() != CUFFT_NVJITLINK_FAILURE && error.status() != CUFFT_NOT_SUPPORTED &&
                                  error.status() != CUFFT_INVALID_VALUE))
        throw;
      std::string names;
      for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog})
        if (callbacks != nullptr && callbacks->has(role))
          names += (names.empty() ? "" : " and ") + callback_name(role, callbacks->callback(role));
      throw CallbackError(fmt::format("FFT: {}: cuFFT could not plan the transform with the callback linked in "
                                      "({}); {}",
                                      names, error.status_name(), error.what()),
                          names, "");
    }
    // cuFFT enqueues part of a plan's setup on the legacy default stream and returns. A transform on a
    // non-blocking stream is not ordered after it: under load it read tables not yet written (illegal address).
    CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&planned_, cudaEventDisableTiming));
    CUPLAN_CUDA_CHECK(cudaEventRecord(planned_, cudaStreamLegacy));
  } catch (...) {
    if (planned_ != nullptr) (void)cudaEventDestroy(planned_);
    planned_ = nullptr;
    cufftDestroy(handle_);
    created_ = false;
    throw;
  }
  log(LogLevel::info,
      "FFT: cuFFT planned {} {} rank {} n [{}] batch {} x {} call(s), istride {} idist {} ostride {} odist {}, "
      "workspace {} bytes on device {}",
      d.in_dtype.name(), to_string(d.type), l.rank, fmt::join(std::span(l.n, static_cast<std::size_t>(l.rank)), ", "),
      l.batch, in_offsets_.size(), l.istride, l.idist, l.ostride, l.odist, workspace_size_, device);
}

void CufftPlan::set_callbacks(const CallbackSet& callbacks, int device, StreamRef stream) {
  int major = 0, minor = 0;
  CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  // The blocks' writer is loaded now, so that an execute never waits for a module load (see load_scale_kernels).
  CUPLAN_CUDA_CHECK(load_callback_info_kernel());
  auto* blocks =
      static_cast<fft_callback::Info*>(callback_blocks_.ensure(2 * sizeof(fft_callback::Info), device, stream));
  for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog}) {
    if (!callbacks.has(role)) continue;
    const int i = CallbackSet::index(role);
    const DType element = callbacks.element(role);
    callback_code_[i] = lto_callback(callbacks.callback(role), role, element, major * 10 + minor);
    const bool prolog = role == CallbackRole::prolog;
    const bool real = !element.is_complex(), dbl = element.real() == f64;
    const cufftXtCallbackType type = prolog ? (real ? (dbl ? CUFFT_CB_LD_REAL_DOUBLE : CUFFT_CB_LD_REAL)
                                                    : (dbl ? CUFFT_CB_LD_COMPLEX_DOUBLE : CUFFT_CB_LD_COMPLEX))
                                            : (real ? (dbl ? CUFFT_CB_ST_REAL_DOUBLE : CUFFT_CB_ST_REAL)
                                                    : (dbl ? CUFFT_CB_ST_COMPLEX_DOUBLE : CUFFT_CB_ST_COMPLEX));
    // caller_info: one device pointer per GPU of the plan, here the callback's Info block.
    caller_info_[i] = blocks + i;
    const LtoCallback& code = *callback_code_[i];
    CUPLAN_CUFFT_CHECK(cufftXtSetJITCallback(handle_, code.symbol.c_str(), code.lto_ir.data(), code.lto_ir.size(), type,
                                             &caller_info_[i]));
  }
  update_callbacks(callbacks, stream.native());
}

void CufftPlan::update_callbacks(const CallbackSet& callbacks, cudaStream_t stream) {
  write_callback_blocks(callbacks, caller_info_, callbacks_version_, stream);
}

CufftPlan::~CufftPlan() {
  if (planned_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(planned_));
  if (created_) {
    const cufftResult status = cufftDestroy(handle_);
    if (status != CUFFT_SUCCESS)
      log(LogLevel::warning, "FFT: cufftDestroy failed with {} (ignored in a destructor)", cufft_status_name(status));
  }
}

void CufftPlan::order_setup_before(cudaStream_t stream) {
  if (planned_ == nullptr) return;
  const cudaError_t status = cudaEventQuery(planned_);
  if (status == cudaErrorNotReady) {
    CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(stream, planned_, 0));
    return;  // kept until seen complete: a later plan() on another stream waits for it as well
  }
  CUPLAN_CUDA_CHECK(status);
  CUPLAN_CUDA_CHECK(cudaEventDestroy(planned_));
  planned_ = nullptr;
}

void CufftPlan::bind(cudaStream_t stream, void* workspace) {
  if (!stream_set_ || stream != stream_) {
    CUPLAN_CUFFT_CHECK(cufftSetStream(handle_, stream));
    stream_ = stream;
    stream_set_ = true;
  }
  // A plan without workspace needs no work area (and none is set while the pointer is null).
  if (workspace_size_ > 0 && (!workspace_set_ || workspace != workspace_)) {
    CUPLAN_CUFFT_CHECK(cufftSetWorkArea(handle_, workspace));
    workspace_ = workspace;
    workspace_set_ = true;
  }
}

void CufftPlan::execute(Direction direction, const void* in, void* out) {
  const int sign = direction == Direction::forward ? CUFFT_FORWARD : CUFFT_INVERSE;
  auto* in_bytes = static_cast<char*>(const_cast<void*>(in));
  auto* out_bytes = static_cast<char*>(out);
  for (std::size_t i = 0; i < in_offsets_.size(); ++i) {
    void* src = in_bytes + in_offsets_[i] * static_cast<std::int64_t>(in_element_);
    void* dst = out_bytes + out_offsets_[i] * static_cast<std::int64_t>(out_element_);
    if (precision_ == f32) {
      if (type_ == FFTType::c2c)
        CUPLAN_CUFFT_CHECK(
            cufftExecC2C(handle_, static_cast<cufftComplex*>(src), static_cast<cufftComplex*>(dst), sign));
      else if (type_ == FFTType::r2c)
        CUPLAN_CUFFT_CHECK(cufftExecR2C(handle_, static_cast<cufftReal*>(src), static_cast<cufftComplex*>(dst)));
      else
        CUPLAN_CUFFT_CHECK(cufftExecC2R(handle_, static_cast<cufftComplex*>(src), static_cast<cufftReal*>(dst)));
    } else if (precision_ == f64) {
      if (type_ == FFTType::c2c)
        CUPLAN_CUFFT_CHECK(
            cufftExecZ2Z(handle_, static_cast<cufftDoubleComplex*>(src), static_cast<cufftDoubleComplex*>(dst), sign));
      else if (type_ == FFTType::r2c)
        CUPLAN_CUFFT_CHECK(
            cufftExecD2Z(handle_, static_cast<cufftDoubleReal*>(src), static_cast<cufftDoubleComplex*>(dst)));
      else
        CUPLAN_CUFFT_CHECK(
            cufftExecZ2D(handle_, static_cast<cufftDoubleComplex*>(src), static_cast<cufftDoubleReal*>(dst)));
    } else {
      CUPLAN_CUFFT_CHECK(cufftXtExec(handle_, src, dst, sign));
    }
  }
}

}  // namespace cuplan::detail
