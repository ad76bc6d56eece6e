// SPDX-License-Identifier: Apache-2.0
// Function forms fft, ifft, rfft, irfft: a cached FftImpl per plan key, reused through adopt_operand and
// execute_validated.

#include <cuda_runtime_api.h>

#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/fft.hpp"
#include "cuplan/format.hpp"
#include "fft/fft_impl.hpp"
#include "fft/fft_validate.hpp"
#include "plan/planning/planned_call.hpp"
#include "plan/work_area.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace {

// Everything that defines an FftImpl: the operand view (dtype, shape, strides, device, memory space, alignment
// class), the options that shape the plan, the execution target and, for host operands run on CUDA, the current
// device (where Execution::automatic puts the work). Small options share words so that a lookup hashes and
// compares as few words as it can; each packing keeps distinct options distinct.
detail::PlanKey make_key(const TensorView& x, const FFTOptions& o, const TensorRef* out) {
  detail::PlanKey key(detail::PlanKind::fft);
  key.add(detail::OperandSignature::of(x));
  // Up to 3 axes of one byte each after the count; anything else (invalid, rejected when planned) word by word,
  // after a count word with bit 62 set, which a packed word never has.
  bool packable = o.axes.size() <= 3;
  std::uint64_t axes_word = o.axes.size();
  for (std::size_t i = 0; i < o.axes.size() && packable; ++i) {
    const int a = o.axes[i];
    packable = a >= -128 && a <= 127;
    axes_word |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(a)) << (8 * (i + 1));
  }
  if (packable) {
    key.add(axes_word);
  } else {
    key.add((std::uint64_t{1} << 62) | o.axes.size());
    for (int a : o.axes) key.add(a);
  }
  // One byte per small option (each enum has fewer than 256 values).
  const auto byte = [](auto value, int slot) {
    return static_cast<std::uint64_t>(static_cast<std::uint8_t>(value)) << (8 * slot);
  };
  key.add(byte(o.fft_type ? static_cast<int>(*o.fft_type) + 1 : 0, 0) | byte(o.last_axis_parity, 1) |
          byte(o.inplace, 2) | byte(o.result_layout, 3) | byte(o.normalization, 4) | byte(o.blocking, 5) |
          byte(o.execution.kind(), 6) | byte(o.graph_replay, 7));
  key.add((static_cast<std::uint64_t>(static_cast<std::uint32_t>(o.execution.device())) << 32) |
          static_cast<std::uint32_t>(o.execution.threads()));
  key.add_host_execution_device(x, o.execution);
  key.add(static_cast<std::uint64_t>(o.device_memory_limit));  // the staged split of a host operand depends on it
  key.add(static_cast<std::uint64_t>(o.planning) | (static_cast<std::uint64_t>(o.route) << 8));
  key.add_work_area(o.work_area, o.work_area_buffer);
  if (out != nullptr) key.add(detail::OperandSignature::of(out->view()));
  // The callbacks' identity (code hash, or the host callable's number), not their user data: a hit takes the
  // call's user data pointers instead.
  for (const FFTCallback* callback : {&o.prolog, &o.epilog})
    if (*callback)
      key.add(static_cast<std::uint64_t>(callback->form())).add(callback->identity(0)).add(callback->identity(1));
    else
      key.add(std::uint64_t{0});
  return key;
}

const char* function_name(FFTType type, Direction direction) {
  if (type == FFTType::r2c) return "rfft";
  if (type == FFTType::c2r) return "irfft";
  return direction == Direction::forward ? "fft" : "ifft";
}

// Plans (or finds the cached plan) and runs it. The operand is moved into the plan and dropped again after the
// call, so the cache never keeps the caller's memory alive.
Tensor run(TensorRef&& x, FFTOptions& options, std::optional<FFTType> type, Direction direction, const TensorRef* out) {
  // Every call, before the plan key: a hit must reject what a miss rejects.
  const char* called = function_name(type.value_or(FFTType::c2c), direction);
  detail::require_defined(x, called, "x");
  if (out != nullptr) detail::require_defined(*out, called, "out");
  detail::validate_fft_options(options, called);
  options.work_area = detail::function_form_work_area(options.work_area);
  if (type) {
    if (options.fft_type && *options.fft_type != *type)
      throw InvalidArgument(fmt::format("{}: fft_type: expected {} for this function, got {}",
                                        function_name(*type, direction), to_string(*type),
                                        to_string(*options.fft_type)));
    options.fft_type = type;
  }
  // Whether the call may write what it writes: not part of the key, so checked here for a hit and a miss alike.
  const char* name = function_name(options.fft_type.value_or(FFTType::c2c), direction);
  if (out != nullptr) detail::check_writable(out->view(), "out", name);
  if (options.inplace) detail::check_writable(x.view(), "operand", name);
  // Up front as well as in the route's execute: on a cache hit as on a miss, before anything is enqueued.
  detail::check_work_area_apart(options.work_area, options.work_area_buffer, x.view(), "operand", name);
  if (out != nullptr)
    detail::check_work_area_apart(options.work_area, options.work_area_buffer, out->view(), "out", name);
  // The resolved type goes into the key, so fft() and ifft() of one operand share a plan.
  const FFTType resolved = detail::resolve_fft_type(x.view().dtype(), options.fft_type);
  options.fft_type = resolved;
  // The direction is fixed by the function; execute_validated trusts it, so the type must allow it.
  if ((resolved == FFTType::r2c && direction != Direction::forward) ||
      (resolved == FFTType::c2r && direction != Direction::inverse))
    throw InvalidArgument(fmt::format("{}: fft_type: a {} transform runs {} only; use {}",
                                      function_name(FFTType::c2c, direction), to_string(resolved),
                                      resolved == FFTType::r2c ? "forward" : "inverse",
                                      resolved == FFTType::r2c ? "fft or rfft" : "ifft or irfft"));
  // A hit has the key's operand and out signatures, so execute_validated checks neither again.
  // A miss plans at the call in either planning mode (plan/planning/planned_call.hpp).
  return detail::run_cached_on_callers_thread<detail::FftImpl>(
      make_key(x.view(), options, out), name,
      [&] {
        std::optional<TensorView> hint;
        if (out != nullptr) hint = out->view();
        return std::make_unique<detail::FftImpl>(x, options, hint);
      },
      [&](detail::FftImpl& impl) { impl.plan(options.stream); },
      [&](detail::FftImpl& impl) {
        impl.adopt_operand(std::move(x));
        if (options.prolog) impl.set_callback_data(options.prolog.user_data(), std::nullopt, name);
        if (options.epilog) impl.set_callback_data(std::nullopt, options.epilog.user_data(), name);
      },
      [&](detail::FftImpl& impl) {
        return impl.execute_validated(direction, options.stream, options.after, out, false);
      });
}

}  // namespace

Tensor fft(TensorRef x, FFTOptions options) {
  // A real operand without fft_type gives an R2C transform, like the class form.
  return run(std::move(x), options, std::nullopt, Direction::forward, nullptr);
}
Tensor ifft(TensorRef x, FFTOptions options) {
  const bool c2r = options.fft_type == FFTType::c2r;
  return run(std::move(x), options, c2r ? std::nullopt : std::optional(FFTType::c2c), Direction::inverse, nullptr);
}
Tensor rfft(TensorRef x, FFTOptions options) {
  return run(std::move(x), options, FFTType::r2c, Direction::forward, nullptr);
}
Tensor irfft(TensorRef x, FFTOptions options) {
  return run(std::move(x), options, FFTType::c2r, Direction::inverse, nullptr);
}

std::size_t estimate_workspace_size(TensorRef operand, const FFTOptions& options) {
  // The class form's construction (its checks and layout decision, no GPU work), then the backend's size.
  return detail::FftImpl(std::move(operand), options).estimate_workspace_size();
}

void fft(TensorRef x, TensorRef out, FFTOptions options) {
  run(std::move(x), options, std::nullopt, Direction::forward, &out);
}
void ifft(TensorRef x, TensorRef out, FFTOptions options) {
  const bool c2r = options.fft_type == FFTType::c2r;
  run(std::move(x), options, c2r ? std::nullopt : std::optional(FFTType::c2c), Direction::inverse, &out);
}
void rfft(TensorRef x, TensorRef out, FFTOptions options) {
  run(std::move(x), options, FFTType::r2c, Direction::forward, &out);
}
void irfft(TensorRef x, TensorRef out, FFTOptions options) {
  run(std::move(x), options, FFTType::c2r, Direction::inverse, &out);
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
