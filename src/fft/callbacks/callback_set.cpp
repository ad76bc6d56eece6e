// SPDX-License-Identifier: Apache-2.0
#include "fft/callbacks/callback_set.hpp"

#include <fmt/format.h>

#include <complex>
#include <variant>

#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

// The alternative of FFTCallback::HostFunction a host callable of `role` over `element` must be.
std::size_t host_alternative(CallbackRole role, DType element) {
  const std::size_t base = role == CallbackRole::prolog ? 1 : 5;
  if (element == f32) return base;
  if (element == f64) return base + 1;
  if (element == c64) return base + 2;
  return base + 3;
}

const char* host_type_name(std::size_t alternative) {
  static const char* names[] = {"none",
                                "HostProlog<float>",
                                "HostProlog<double>",
                                "HostProlog<std::complex<float>>",
                                "HostProlog<std::complex<double>>",
                                "HostEpilog<float>",
                                "HostEpilog<double>",
                                "HostEpilog<std::complex<float>>",
                                "HostEpilog<std::complex<double>>"};
  return alternative < 9 ? names[alternative] : "?";
}

DType element_of(CallbackRole role, const LayoutDecision& d) {
  return role == CallbackRole::prolog ? d.in_dtype : d.out_dtype;
}

}  // namespace

CallbackSet::CallbackSet(const FFTOptions& options, const LayoutDecision& decision, const ExecutionTarget& target)
    : prolog_(options.prolog), epilog_(options.epilog) {
  for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog}) {
    element_[index(role)] = element_of(role, decision);
    if (!has(role)) continue;
    check(role, decision, target);
    const bool prolog = role == CallbackRole::prolog;
    info_[index(role)] = make_callback_info(prolog ? decision.in_shape : decision.out_shape,
                                            prolog ? decision.compute_in_strides : decision.compute_out_strides,
                                            callback(role).user_data(), callback_name(role, callback(role)));
  }
}

void CallbackSet::check(CallbackRole role, const LayoutDecision& d, const ExecutionTarget& target) const {
  const FFTCallback& cb = callback(role);
  const std::string name = callback_name(role, cb);
  const DType element = element_of(role, d);
  const auto refuse = [&](const std::string& why) {
    throw CallbackError(fmt::format("FFT: {}: {}", name, why), name, "");
  };
  if (element.real() != f32 && element.real() != f64)
    refuse(
        fmt::format("callbacks take f32, f64, c64 or c128 elements (cuFFT has no half-precision callback type), "
                    "got {}",
                    element.name()));
  if (!target.cuda) {
    if (cb.form() != FFTCallback::Form::host)
      refuse(fmt::format(
          "{} cannot run on the CPU: CPU execution (FFTW) runs host callables only; give "
          "FFTCallback::host_{}<T>(...) for Execution::cpu(), or run on CUDA",
          cb.form() == FFTCallback::Form::cuda_source ? "CUDA source" : "LTO-IR (device code)", role_name(role)));
    const std::size_t expected = host_alternative(role, element);
    const std::size_t got = cb.host()->index();
    if (got != expected)
      refuse(fmt::format("signature does not match the transform: {} {} of a {} transform needs a {}, got a {}",
                         to_string(d.type), role_name(role), element.name(), host_type_name(expected),
                         host_type_name(got)));
    return;
  }
  if (cb.form() == FFTCallback::Form::host)
    refuse(
        fmt::format("a host callable cannot run in cuFFT's kernels; give CUDA source (FFTCallback::cuda_source) "
                    "or LTO-IR (FFTCallback::lto_ir) for CUDA execution, or use Execution::cpu()"));
  if (target.host_operands)
    refuse(
        "unsupported layout: a host operand with CUDA execution is transformed chunk by chunk through staging "
        "buffers, where cuFFT's offsets are relative to the chunk; copy the operand to the device first, or use "
        "CPU execution with a host callable (docs/fft.md, \"Callbacks\")");
  if (d.layout.rank == 0)
    refuse("unsupported layout: every transformed axis has length 1, so no cuFFT transform runs to call it");
  if (d.layout.loop_in_offsets.size() != 1)
    refuse(
        fmt::format("unsupported layout: the transform takes {} cuFFT calls, whose offsets would be relative to "
                    "each call",
                    d.layout.loop_in_offsets.size()));
}

void CallbackSet::set_user_data(CallbackRole role, void* user_data, const char* method) {
  if (!has(role))
    throw StateError(fmt::format("{}: {}_data: the FFT was planned without a {}; set FFTOptions::{} to use one", method,
                                 role_name(role), role_name(role), role_name(role)));
  fft_callback::Info& info = info_[index(role)];
  if (info.user_data == user_data) return;
  info.user_data = user_data;
  ++version_;
}

}  // namespace cuplan::detail
