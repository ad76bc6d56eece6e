// SPDX-License-Identifier: Apache-2.0
// The fused FFT route's rules and plan (see fused_fft.hpp).

#include "fft/routes/fused_fft.hpp"

#include <fmt/format.h>

#include "base/cuda_check.hpp"
#include "cuplan/errors.hpp"
#include "fft/cufft/callback_info_kernel.hpp"

namespace cuplan::detail {
namespace {}  // namespace

int device_sm(int device) {
  int major = 0, minor = 0;
  CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

std::int64_t fused_fft_max_length(DType precision, int sm) noexcept {
  // cuFFTDx 1.5's limits per architecture (its fft_sizes.hpp): f32, f64.
  struct Limit {
    int sm;
    std::int64_t f32, f64;
  };
  static constexpr Limit limits[] = {{70, 24389, 12167},  {72, 24389, 12167},  {75, 16384, 8192},   {80, 32768, 16384},
                                     {86, 24389, 12167},  {87, 32768, 16384},  {89, 24389, 12167},  {90, 32768, 16384},
                                     {100, 32768, 16384}, {101, 32768, 16384}, {103, 32768, 16384}, {120, 24389, 12167},
                                     {121, 24389, 12167}};
  for (const Limit& l : limits)
    if (l.sm == sm) return precision == f64 ? l.f64 : l.f32;
  return 0;
}

std::string fused_fft_refusal(const LayoutDecision& d, const FusedFftContext& context) {
  const FFTOptions& o = context.options;
  for (const FFTCallback* c : {&o.prolog, &o.epilog})
    if (*c && c->form() != FFTCallback::Form::cuda_source)
      return fmt::format(
          "the {} is {}; the fused kernel inlines callbacks given as CUDA source "
          "(FFTCallback::cuda_source)",
          c == &o.prolog ? "prolog" : "epilog", c->form() == FFTCallback::Form::lto_ir ? "LTO-IR" : "a host callable");
  const DType precision = d.in_dtype.real();
  if (precision != f32 && precision != f64)
    return fmt::format("the fused kernel runs f32 and f64 data, got {}", d.in_dtype.name());
  const AdvancedLayout& l = d.layout;
  if (l.rank != 1) return fmt::format("the transform has {} axes; the fused kernel transforms one", l.rank);
  if (l.istride != 1 || l.ostride != 1)
    return fmt::format(
        "the transformed axis has stride {} in the {} (the fused kernel loads and stores rows of "
        "stride 1, coalesced)",
        l.istride != 1 ? l.istride : l.ostride, l.istride != 1 ? "input" : "output");
  if (l.loop_in_offsets.size() != 1)
    return fmt::format("the batch needs {} calls (its axes do not merge into one)", l.loop_in_offsets.size());
  const std::int64_t n = l.n[0];
  if (!context.headers_problem.empty()) return context.headers_problem;
  const std::int64_t max = fused_fft_max_length(precision, context.sm);
  if (max == 0) return fmt::format("cuFFTDx does not support the device's architecture (sm_{})", context.sm);
  if (n < 2 || n > max)
    return fmt::format("length {} is outside cuFFTDx's range for {} on sm_{} (2 to {})", n, precision.name(),
                       context.sm, max);
  if (context.native_length && !context.native_length(precision, n))
    return fmt::format(
        "length {} is not one cuFFTDx runs without a workspace for {} (its own kernels: every length to 64, then "
        "products of small primes such as 1000, 2048, 2187, 3125, 4096; others would need Bluestein's algorithm)",
        n, precision.name());
  if (d.type != FFTType::c2c && n % 2 != 0)
    return fmt::format("length {} is odd (the fused kernel's real transforms take even lengths)", n);
  return {};
}

bool takes_fused_route(const LayoutDecision& decision, const FusedFftContext& context) {
  const FFTOptions& o = context.options;
  if (o.route == FFTRoute::cufft) return false;
  // automatic stays on cuFFT until the fused route has run through the whole GPU suite (docs/fft.md, "Route choice").
  if (o.route == FFTRoute::automatic) return false;
  const std::string refusal = fused_fft_refusal(decision, context);
  if (refusal.empty()) return true;
  if (o.route == FFTRoute::fused)
    throw NotSupported(fmt::format("FFT: route fused: {} ({} {} -> {}, lengths [{}])", refusal,
                                   to_string(decision.type), decision.in_dtype.name(), decision.out_dtype.name(),
                                   decision.layout.n[0]));
  return false;
}

FusedFftPlan::FusedFftPlan(const LayoutDecision& d, int device, int sm, const CallbackSet* callbacks, StreamRef stream)
    : rows_(d.layout.batch), idist_(d.layout.idist), odist_(d.layout.odist) {
  fused_fft::KernelSpec spec;
  spec.type = d.type;
  spec.precision = d.in_dtype.real();
  spec.length = d.layout.n[0];
  spec.sm = sm;
  if (callbacks != nullptr)
    for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog}) {
      if (!callbacks->has(role)) continue;
      const FFTCallback& c = callbacks->callback(role);
      auto inlined = std::make_shared<fused_fft::InlinedCallback>(fused_fft::InlinedCallback{
          c.code()->source, c.code()->symbol, callbacks->element(role), callback_name(role, c)});
      (role == CallbackRole::prolog ? spec.prolog : spec.epilog) = std::move(inlined);
    }
  has_epilog_ = spec.epilog != nullptr;
  compiled_ = fused_fft::compiled_kernel(spec);
  kernel_ = fused_fft::LoadedKernel::load(compiled_, device);
  if (callbacks != nullptr) {
    // The blocks' writer is loaded now, so that an execute never waits for a module load.
    CUPLAN_CUDA_CHECK(load_callback_info_kernel());
    auto* blocks = static_cast<fft_callback::Info*>(blocks_.ensure(2 * sizeof(fft_callback::Info), device, stream));
    for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog})
      if (callbacks->has(role)) info_[CallbackSet::index(role)] = blocks + CallbackSet::index(role);
    update_callbacks(*callbacks, stream.native());
  }
}

void FusedFftPlan::update_callbacks(const CallbackSet& callbacks, cudaStream_t stream) {
  write_callback_blocks(callbacks, info_, callbacks_version_, stream);
}

void FusedFftPlan::execute(Direction direction, const void* in, void* out, double scale, cudaStream_t stream) const {
  fused_fft::FusedFftRows rows;
  rows.in = in;
  rows.out = out;
  rows.rows = rows_;
  rows.idist = idist_;
  rows.odist = odist_;
  rows.prolog_info = info_[0];
  rows.epilog_info = info_[1];
  rows.scale = has_epilog_ ? 1.0 : scale;
  kernel_->launch(direction, rows, stream);
}

std::string FusedFftPlan::description() const {
  return fmt::format("fused cuFFTDx kernel of cuplan's own ({})", compiled_->key);
}

}  // namespace cuplan::detail
