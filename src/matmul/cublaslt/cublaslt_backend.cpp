// SPDX-License-Identifier: Apache-2.0
#include "matmul/cublaslt/cublaslt_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>

#include "base/cuda_types.hpp"
#include "base/geometry.hpp"
#include "base/log.hpp"
#include "base/nvtx_memory.hpp"
#include "cuplan/errors.hpp"
#include "matmul/cublaslt/autotune_order.hpp"
#include "matmul/cublaslt/cublaslt_check.hpp"
#include "plan/autotune_progress.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan::detail::mm {
namespace {

cudaDataType_t cuda_type(DType t) {
  const auto type = cuda_data_type(t);
  if (!type || t.code() == DTypeCode::c32)
    throw NotSupported(fmt::format("matmul: dtype {} has no cuBLASLt type", t.name()));
  return *type;
}

cublasLtEpilogue_t lt_epilogue(Epilog e) {
  switch (e) {
    case Epilog::none:
      return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilog::relu:
      return CUBLASLT_EPILOGUE_RELU;
    case Epilog::gelu:
      return CUBLASLT_EPILOGUE_GELU;
    case Epilog::bias:
      return CUBLASLT_EPILOGUE_BIAS;
    case Epilog::relu_bias:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilog::gelu_bias:
      return CUBLASLT_EPILOGUE_GELU_BIAS;
    case Epilog::relu_aux:
      return CUBLASLT_EPILOGUE_RELU_AUX;
    case Epilog::gelu_aux:
      return CUBLASLT_EPILOGUE_GELU_AUX;
    case Epilog::relu_aux_bias:
      return CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
    case Epilog::gelu_aux_bias:
      return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case Epilog::drelu:
      return CUBLASLT_EPILOGUE_DRELU;
    case Epilog::drelu_bgrad:
      return CUBLASLT_EPILOGUE_DRELU_BGRAD;
    case Epilog::dgelu:
      return CUBLASLT_EPILOGUE_DGELU;
    case Epilog::dgelu_bgrad:
      return CUBLASLT_EPILOGUE_DGELU_BGRAD;
    case Epilog::bgrada:
      return CUBLASLT_EPILOGUE_BGRADA;
    case Epilog::bgradb:
      return CUBLASLT_EPILOGUE_BGRADB;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

template <class T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  CUPLAN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}
template <class T>
void set_layout(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, const T& value) {
  CUPLAN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, attr, &value, sizeof(value)));
}

template <class T>
void put_scalar(std::array<unsigned char, 16>& out, T value) {
  static_assert(sizeof(T) <= 16);
  std::memcpy(out.data(), &value, sizeof(T));
}

}  // namespace

cublasLtHandle_t lt_handle(int device) {
  static std::array<std::once_flag, max_devices> once;
  static std::array<cublasLtHandle_t, max_devices> handles{};
  if (device < 0 || device >= max_devices)
    throw InvalidArgument(
        fmt::format("matmul: CUDA device {} out of the supported range [0, {})", device, max_devices));
  std::call_once(once[static_cast<std::size_t>(device)], [device] {
    int previous = 0;
    CUPLAN_CUDA_CHECK(cudaGetDevice(&previous));
    CUPLAN_CUDA_CHECK(cudaSetDevice(device));
    const cublasStatus_t status = cublasLtCreate(&handles[static_cast<std::size_t>(device)]);
    CUPLAN_CUDA_CHECK(cudaSetDevice(previous));
    CUPLAN_CUBLAS_CHECK(status);
  });
  return handles[static_cast<std::size_t>(device)];
}

LtPlan::LtPlan(const Problem& p, int device, std::complex<double> alpha, std::complex<double> beta, bool c_in_d,
               const char* who)
    : device_(device), swapped_(p.swapped), has_c_(p.has_c), epilog_(p.epilog), who_(who) {
  try {
    build(p, alpha, beta, c_in_d);
  } catch (...) {
    release();  // descriptors made before the failure
    throw;
  }
}

void LtPlan::build(const Problem& p, std::complex<double> alpha, std::complex<double> beta, bool c_in_d) {
  const int device = device_;
  const char* who = who_;
  if (p.a_dtype.is_fp8()) {
    int major = 0, minor = 0;
    CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    if (major * 10 + minor < 89)
      throw NotSupported(fmt::format("{}: fp8 operands need a GPU with compute capability >= 8.9; device {} has {}.{}",
                                     who, device, major, minor));
  }
  handle_ = lt_handle(device);

  // Compute and scale types: the requested accumulation, alpha and beta in the matching real or complex type.
  const bool complex = p.a_dtype.is_complex();
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = complex ? CUDA_C_32F : CUDA_R_32F;
  if (p.compute == Compute::f16) {
    compute = CUBLAS_COMPUTE_16F;
    scale = CUDA_R_16F;
  } else if (p.compute == Compute::tf32) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else if (p.compute == Compute::f64) {
    compute = CUBLAS_COMPUTE_64F;
    scale = complex ? CUDA_C_64F : CUDA_R_64F;
  }
  scale_type_ = scale;
  set_scalars(alpha, beta);
  // Operand roles. Swapped: cuBLASLt computes D^T (N x M, column-major = D row-major) from slot A = op(B)^T and
  // slot B = op(A)^T. Native: slot A = op(A), slot B = op(B), D column-major M x N.
  struct Slot {
    const MatrixLayout* layout;
    bool conj;
    const char* name;
  };
  const Slot slot_a = swapped_ ? Slot{&p.b, p.conjugate_b, "b"} : Slot{&p.a, p.conjugate_a, "a"};
  const Slot slot_b = swapped_ ? Slot{&p.a, p.conjugate_a, "a"} : Slot{&p.b, p.conjugate_b, "b"};
  auto op_of = [&](const Slot& s) {
    // Memory read column-major holds the matrix itself (column-major operand) or its transpose (row-major). The
    // slot needs op(X) native, op(X)^T swapped. The planning layer orients conjugated operands so that they are
    // always consumed with a transpose (CUBLAS_OP_C); reaching the throw means that rule was broken.
    const bool stored_is_required = s.layout->row_major == swapped_;
    if (stored_is_required && s.conj)
      throw NotSupported(
          fmt::format("{}: conjugate_{}: operand {} is {} and the product writes a {} D; cuBLASLt conjugates only "
                      "together with a transpose",
                      who, s.name, s.name, s.layout->row_major ? "row-major" : "column-major",
                      swapped_ ? "row-major" : "column-major"));
    return stored_is_required ? CUBLAS_OP_N : (s.conj ? CUBLAS_OP_C : CUBLAS_OP_T);
  };
  const cublasOperation_t op_a = op_of(slot_a), op_b = op_of(slot_b);
  if (p.a_dtype.is_fp8() && (op_a != CUBLAS_OP_T || op_b != CUBLAS_OP_N))
    throw NotSupported(
        fmt::format("{}: fp8 products on cuBLASLt need A row-major and B column-major (A {}, B {} "
                    "given)",
                    who, p.a.row_major ? "row-major" : "column-major", p.b.row_major ? "row-major" : "column-major"));

  CUPLAN_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, compute, scale));
  set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<std::int32_t>(op_a));
  set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<std::int32_t>(op_b));
  set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<std::uint32_t>(lt_epilogue(p.epilog)));
  const EpilogTraits traits = epilog_traits(p.epilog);
  binds_bias_ = p.has_bias || traits.bias_gradient;
  if (binds_bias_) {
    set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<std::int32_t>(cuda_type(p.result_dtype)));
    const std::int64_t stride = p.has_bias ? p.bias_batch_stride : p.bias_gradient_length;
    if (p.batch_count > 1) set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, stride);
  }
  if (p.has_aux) {
    set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, p.aux_ld);
    if (p.batch_count > 1) set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, p.aux_batch_stride);
  }

  auto make_layout = [&](cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         std::int64_t batch_stride) {
    cublasLtMatrixLayout_t l = nullptr;
    CUPLAN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(rows),
                                                   static_cast<std::uint64_t>(cols), std::max<std::int64_t>(ld, 1)));
    if (p.batch_count > 1) {
      set_layout(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<std::int32_t>(p.batch_count));
      set_layout(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, batch_stride);
    }
    return l;
  };
  auto operand_layout = [&](const Slot& s, DType t) {
    const MatrixLayout& m = *s.layout;
    // Read column-major: a row-major rows x cols matrix is its cols x rows transpose.
    return m.row_major ? make_layout(cuda_type(t), m.cols, m.rows, m.ld, m.batch_stride)
                       : make_layout(cuda_type(t), m.rows, m.cols, m.ld, m.batch_stride);
  };
  a_ = operand_layout(slot_a, swapped_ ? p.b_dtype : p.a_dtype);
  b_ = operand_layout(slot_b, swapped_ ? p.a_dtype : p.b_dtype);
  // D (and C when it is read from D): column-major N x M (= D row-major) swapped, column-major M x N native; the
  // planning layer's d_strides say the same.
  const cudaDataType_t d_type = cuda_type(p.result_dtype);
  const std::int64_t d_rows = swapped_ ? p.n : p.m, d_cols = swapped_ ? p.m : p.n;
  const std::int64_t d_stride = p.m * p.n;
  d_ = make_layout(d_type, d_rows, d_cols, d_rows, d_stride);
  d_bytes_ = static_cast<std::size_t>(d_stride * p.batch_count) * p.result_dtype.size();
  c_ = (p.has_c && !c_in_d) ? make_layout(d_type, d_rows, d_cols, p.c.ld, p.c.batch_stride)
                            : make_layout(d_type, d_rows, d_cols, d_rows, d_stride);
  log(LogLevel::info, "{}: cuBLASLt {} x {} x {} batch {} {}{} op_a={} op_b={} epilog={} compute={}", who, p.m, p.n,
      p.k, p.batch_count, p.a_dtype.name(),
      swapped_ ? " as D^T = op(B)^T op(A)^T (D row-major)" : " native (D column-major)", static_cast<int>(op_a),
      static_cast<int>(op_b), to_string(p.epilog), to_string(p.compute));
}

void LtPlan::mark_result_written(void* d, cudaStream_t stream) const noexcept {
  nvtx_mark_written(d, d_bytes_, stream);
}

bool LtPlan::set_scalars(std::complex<double> alpha, std::complex<double> beta) noexcept {
  const auto previous_alpha = alpha_, previous_beta = beta_;
  switch (scale_type_) {
    case CUDA_R_16F:
      put_scalar(alpha_, __float2half(static_cast<float>(alpha.real())));
      put_scalar(beta_, __float2half(static_cast<float>(beta.real())));
      break;
    case CUDA_R_32F:
      put_scalar(alpha_, static_cast<float>(alpha.real()));
      put_scalar(beta_, static_cast<float>(beta.real()));
      break;
    case CUDA_R_64F:
      put_scalar(alpha_, alpha.real());
      put_scalar(beta_, beta.real());
      break;
    case CUDA_C_32F:
      put_scalar(alpha_, std::complex<float>(alpha));
      put_scalar(beta_, std::complex<float>(beta));
      break;
    default:
      put_scalar(alpha_, alpha);
      put_scalar(beta_, beta);
      break;
  }
  return alpha_ != previous_alpha || beta_ != previous_beta;
}

LtPlan::~LtPlan() {
  release();
}

void LtPlan::release() noexcept {
  // Destroying a descriptor only frees host memory; a failure here has nothing left to clean up.
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  a_ = b_ = c_ = d_ = nullptr;
  desc_ = nullptr;
}

void LtPlan::bind(const LtPointers& p) {
  // A plan without a bias epilog (the plain product behind a separate bias-gradient reduction) binds none.
  const void* bias_pointer = !binds_bias_ ? nullptr : (p.bias != nullptr ? p.bias : p.bias_gradient);
  if (bias_pointer != bound_bias_) set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_pointer);
  if (p.aux != bound_.aux) set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, static_cast<const void*>(p.aux));
  if (p.scale_a != bound_.scale_a) set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, p.scale_a);
  if (p.scale_b != bound_.scale_b) set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, p.scale_b);
  bound_ = p;
  bound_bias_ = bias_pointer;
}

void LtPlan::find_algorithms(const MatmulPreferences& prefs, std::size_t memory_limit, bool limit_from_user,
                             const LtPointers& pointers) {
  bind(pointers);  // prefs were checked by the caller (mm::check_preferences, on every execution space)
  auto query = [&](std::size_t limit) {
    cublasLtMatmulPreference_t pref = nullptr;
    CUPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(prefs.limit));
    int found = 0;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    try {
      const std::uint64_t bytes = limit;
      CUPLAN_CUBLAS_CHECK(
          cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof(bytes)));
      const std::uint32_t mask = prefs.reduction_scheme_mask;
      CUPLAN_CUBLAS_CHECK(
          cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof(mask)));
      if (prefs.max_waves_count > 0) {
        const float waves = static_cast<float>(prefs.max_waves_count);
        CUPLAN_CUBLAS_CHECK(
            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, &waves, sizeof(waves)));
      }
      // Algorithms must work for every operand alignment reset_operands accepts (at least the planned ones).
      const std::uint32_t align_a = alignment_class(pointers.a), align_b = alignment_class(pointers.b),
                          align_c = alignment_class(pointers.c != nullptr ? pointers.c : pointers.d),
                          align_d = alignment_class(pointers.d);
      CUPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                               swapped_ ? &align_b : &align_a, sizeof(align_a)));
      CUPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                               swapped_ ? &align_a : &align_b, sizeof(align_b)));
      CUPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                               &align_c, sizeof(align_c)));
      CUPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                               &align_d, sizeof(align_d)));
      status =
          cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, d_, pref, prefs.limit, results.data(), &found);
    } catch (...) {
      cublasLtMatmulPreferenceDestroy(pref);
      throw;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED)
      found = 0;
    else
      CUPLAN_CUBLAS_CHECK(status);
    results.resize(static_cast<std::size_t>(found));
    std::erase_if(results, [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
    return results;
  };
  candidates_ = query(memory_limit);
  measured_ms_.assign(candidates_.size(), -1.0f);
  if (!candidates_.empty()) {
    log(LogLevel::info, "{}: heuristic gave {} candidates; first needs {} workspace bytes", who_, candidates_.size(),
        candidates_[0].workspaceSize);
    return;
  }
  constexpr std::size_t generous = std::size_t{1} << 30;
  if (limit_from_user && memory_limit < generous) {
    auto unlimited = query(generous);
    if (!unlimited.empty()) {
      std::size_t least = unlimited[0].workspaceSize;
      for (const auto& r : unlimited) least = std::min(least, r.workspaceSize);
      throw InvalidArgument(
          fmt::format("{}: memory_limit = {} bytes is too small for any algorithm; the smallest "
                      "candidate needs {} bytes of workspace",
                      who_, memory_limit, least));
    }
  }
  throw NotSupported(
      fmt::format("{}: cuBLASLt has no algorithm for this product (epilog {}, {} D); try another "
                  "epilog, layout or dtype",
                  who_, to_string(epilog_), swapped_ ? "row-major" : "column-major"));
}

std::size_t LtPlan::workspace_bytes() const noexcept {
  return candidates_.empty() ? 0 : candidates_[0].workspaceSize;
}

std::size_t LtPlan::max_workspace_bytes() const noexcept {
  std::size_t most = 0;
  for (const auto& r : candidates_) most = std::max(most, r.workspaceSize);
  return most;
}

std::vector<AlgorithmInfo> LtPlan::algorithms() const {
  std::vector<AlgorithmInfo> out;
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    AlgorithmInfo info;
    info.index = static_cast<int>(i);
    auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto& value) {
      std::size_t written = 0;
      CUPLAN_CUBLAS_CHECK(
          cublasLtMatmulAlgoConfigGetAttribute(&candidates_[i].algo, attr, &value, sizeof(value), &written));
    };
    std::int32_t id = 0, split_k = 1;
    std::uint32_t tile = 0, stages = 0, scheme = 0;
    get(CUBLASLT_ALGO_CONFIG_ID, id);
    get(CUBLASLT_ALGO_CONFIG_TILE_ID, tile);
    get(CUBLASLT_ALGO_CONFIG_STAGES_ID, stages);
    get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, split_k);
    get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, scheme);
    info.algorithm_id = id;
    info.tile = static_cast<int>(tile);
    info.stages = static_cast<int>(stages);
    info.split_k = split_k;
    info.reduction_scheme = static_cast<int>(scheme);
    info.workspace_bytes = candidates_[i].workspaceSize;
    info.waves_count = candidates_[i].wavesCount;
    if (measured_ms_[i] >= 0) info.measured_ms = measured_ms_[i];
    info.description = fmt::format("algo {} tile {} stages {} split-k {} workspace {} B waves {:.2f}", id, tile, stages,
                                   split_k, info.workspace_bytes, info.waves_count);
    out.push_back(std::move(info));
  }
  return out;
}

void LtPlan::run(const LtPointers& p, cudaStream_t stream, void* workspace, std::size_t workspace_size,
                 std::size_t index) const {
  const void* c = has_c_ && p.c != nullptr ? p.c : p.d;
  CUPLAN_CUBLAS_CHECK(cublasLtMatmul(handle_, desc_, alpha_.data(), swapped_ ? p.b : p.a, a_, swapped_ ? p.a : p.b, b_,
                                     beta_.data(), c, c_, p.d, d_, &candidates_[index].algo, workspace, workspace_size,
                                     stream));
}

namespace {

// Every cuBLASLt run autotune() enqueues (warm-up and timed), for autotune_runs().
std::atomic<long> g_autotune_runs{0};

// Median over `rounds` of the mean time of a burst of back-to-back runs of candidate `measured`, each burst preceded
// by one of candidate `other` so that neither always starts on an idle GPU.
template <class Enqueue>
float steady_burst_ms(const Enqueue& enqueue, std::size_t measured, std::size_t other, cudaStream_t stream,
                      int rounds) {
  constexpr int burst = 8;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<float> times;
  try {
    CUPLAN_CUDA_CHECK(cudaEventCreate(&start));
    CUPLAN_CUDA_CHECK(cudaEventCreate(&stop));
    for (int r = 0; r < std::max(rounds, 3); ++r) {
      CUPLAN_CUBLAS_CHECK(enqueue(other));
      CUPLAN_CUDA_CHECK(cudaEventRecord(start, stream));
      for (int i = 0; i < burst; ++i) CUPLAN_CUBLAS_CHECK(enqueue(measured));
      CUPLAN_CUDA_CHECK(cudaEventRecord(stop, stream));
      CUPLAN_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUPLAN_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(ms / burst);
    }
  } catch (...) {
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

}  // namespace

void LtPlan::autotune(const LtPointers& p, cudaStream_t stream, void* workspace, std::size_t workspace_size,
                      int iterations, void* flush, std::size_t flush_bytes, const AutotuneProgressCallback& progress) {
  const std::size_t count = candidates_.size();
  auto enqueue = [&](std::size_t i) {
    g_autotune_runs.fetch_add(1, std::memory_order_relaxed);
    // Each candidate gets exactly the workspace size execute() will pass it.
    return cublasLtMatmul(handle_, desc_, alpha_.data(), swapped_ ? p.b : p.a, a_, swapped_ ? p.a : p.b, b_,
                          beta_.data(), has_c_ && p.c != nullptr ? p.c : p.d, c_, p.d, d_, &candidates_[i].algo,
                          workspace, candidates_[i].workspaceSize, stream);
  };
  // Warm-up: one run each. A candidate the library rejects at run time is dropped, not fatal.
  std::vector<bool> runs(count, false);
  for (std::size_t i = 0; i < count; ++i)
    runs[i] = candidates_[i].workspaceSize <= workspace_size && enqueue(i) == CUBLAS_STATUS_SUCCESS;
  std::vector<cudaEvent_t> events(2 * count, nullptr);
  std::vector<std::vector<float>> times(count);
  AutotuneReporter reporter(progress, static_cast<int>(count),
                            static_cast<int>(std::count(runs.begin(), runs.end(), true)), iterations);
  try {
    for (auto& e : events) CUPLAN_CUDA_CHECK(cudaEventCreate(&e));
    // Rounds of one timed run per candidate, enqueued back to back so the GPU stays busy (clocks and power as in
    // steady use), starting at a different candidate each round so none always follows the idle gap. The cache
    // flush runs before the start event: it is never part of a measurement.
    for (int round = 0; round < iterations; ++round) {
      for (std::size_t j = 0; j < count; ++j) {
        const std::size_t i = (j + static_cast<std::size_t>(round)) % count;
        if (!runs[i]) continue;
        if (flush != nullptr) CUPLAN_CUDA_CHECK(cudaMemsetAsync(flush, round & 0xff, flush_bytes, stream));
        CUPLAN_CUDA_CHECK(cudaEventRecord(events[2 * i], stream));
        CUPLAN_CUBLAS_CHECK(enqueue(i));
        CUPLAN_CUDA_CHECK(cudaEventRecord(events[2 * i + 1], stream));
      }
      CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));
      for (std::size_t i = 0; i < count; ++i) {
        if (!runs[i]) continue;
        float ms = 0;
        CUPLAN_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
        times[i].push_back(ms);
      }
      if (reporter.active()) reporter.round_done(times);  // between rounds: the stream is idle of tuning work
    }
  } catch (...) {
    for (cudaEvent_t e : events)
      if (e != nullptr) cudaEventDestroy(e);
    throw;
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  std::vector<float> median(count, -1.0f);
  for (std::size_t i = 0; i < count; ++i) {
    if (times[i].empty()) continue;
    auto mid = times[i].begin() + static_cast<std::ptrdiff_t>(times[i].size() / 2);
    std::nth_element(times[i].begin(), mid, times[i].end());
    median[i] = *mid;
  }
  std::vector<std::size_t> order = autotune_order(median);
  if (order.empty())
    throw NotSupported(fmt::format("{}: autotune found no candidate that runs on these operands", who_));
  if (order.front() != 0 && runs[0]) {
    // Single runs after a cache flush can favour a candidate that is slower in steady use (back-to-back calls, as
    // in a time-step loop). Confirm the winner against the heuristic's choice with bursts of back-to-back runs,
    // alternating which goes first; keep the heuristic's choice unless the winner is still clearly faster.
    const std::size_t challenger = order.front();
    const float winner = steady_burst_ms(enqueue, challenger, 0, stream, iterations);
    const float first = steady_burst_ms(enqueue, 0, challenger, stream, iterations);
    if (!(winner < first * (1.0f - autotune_margin))) {
      order.erase(std::find(order.begin(), order.end(), std::size_t{0}));
      order.insert(order.begin(), 0);
    }
    log(LogLevel::info, "{}: autotune steady-state check: candidate {} {:.4f} ms, heuristic's first {:.4f} ms; kept {}",
        who_, challenger, winner, first, order.front());
  }
  std::vector<cublasLtMatmulHeuristicResult_t> sorted;
  std::vector<float> kept;
  for (std::size_t i : order) {
    sorted.push_back(candidates_[i]);
    kept.push_back(median[i]);
  }
  log(LogLevel::info,
      "{}: autotune kept {} of {} candidates; chose heuristic candidate {} at {:.4f} ms (heuristic's first: {:.4f} "
      "ms)",
      who_, sorted.size(), count, order.front(), kept.front(), median[0]);
  candidates_ = std::move(sorted);
  measured_ms_ = std::move(kept);
}

long autotune_runs() noexcept {
  return g_autotune_runs.load(std::memory_order_relaxed);
}

std::string tuning_context(int device) {
  cudaDeviceProp props{};
  CUPLAN_CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  return fmt::format("{} sm_{}{} cuBLASLt {}", props.name, props.major, props.minor, cublasLtGetVersion());
}

namespace {
std::string config_of(const AlgorithmInfo& a) {
  return fmt::format("{} {} {} {} {}", a.algorithm_id, a.tile, a.stages, a.split_k, a.reduction_scheme);
}
}  // namespace

std::string LtPlan::choice() const {
  const std::vector<AlgorithmInfo> infos = algorithms();
  return infos.empty() ? std::string() : config_of(infos.front());
}

std::string LtPlan::candidate_signature() const {
  std::string out;
  for (const AlgorithmInfo& a : algorithms()) {  // appended piecewise: "[" + string draws a GCC 12 -Wrestrict
    out += '[';
    out += config_of(a);
    out += ']';
  }
  return out;
}

bool LtPlan::apply_choice(const std::string& wanted) {
  const std::vector<AlgorithmInfo> infos = algorithms();
  for (std::size_t i = 0; i < infos.size(); ++i) {
    if (config_of(infos[i]) != wanted) continue;
    std::rotate(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(i),
                candidates_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    std::fill(measured_ms_.begin(), measured_ms_.end(), -1.0f);
    return true;
  }
  return false;
}

}  // namespace cuplan::detail::mm
