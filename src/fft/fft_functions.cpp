// Function forms fft, ifft, rfft, irfft: a cached FftImpl per plan key, reused through swap_operand + execute.

#include <cuda_runtime_api.h>

#include "cuplan/errors.hpp"
#include "cuplan/fft.hpp"
#include "fft/fft_impl.hpp"
#include "runtime/plan_cache.hpp"

namespace cuplan {
namespace {

// Everything that defines an FftImpl: the operand view (dtype, shape, strides, device, memory space, alignment
// class), the options that shape the plan, the execution target and, for host operands run on CUDA, the current
// device (where Execution::automatic puts the work).
detail::PlanKey make_key(const TensorView& x, const FFTOptions& o, const TensorView* out) {
  detail::PlanKey key(detail::PlanKind::fft);
  key.add(x);
  key.add(static_cast<std::int64_t>(o.axes.size()));
  for (int a : o.axes) key.add(static_cast<std::int64_t>(a));
  key.add(static_cast<std::int64_t>(o.fft_type ? static_cast<int>(*o.fft_type) : -1));
  key.add(static_cast<std::int64_t>(o.last_axis_parity));
  key.add(static_cast<std::int64_t>(o.inplace));
  key.add(static_cast<std::int64_t>(o.result_layout));
  key.add(static_cast<std::int64_t>(o.normalization));
  key.add(static_cast<std::int64_t>(o.blocking));
  key.add(static_cast<std::int64_t>(o.execution.kind()));
  key.add(static_cast<std::int64_t>(o.execution.device()));
  key.add(static_cast<std::int64_t>(o.execution.threads()));
  const bool host = x.memory_space() == MemorySpace::host_pageable || x.memory_space() == MemorySpace::host_pinned;
  if (host && o.execution.kind() != Execution::Kind::cpu && o.execution.device() < 0) {
    int current = -1;
    if (cuda_available() && cudaGetDevice(&current) != cudaSuccess) current = -1;
    key.add(static_cast<std::int64_t>(current));
  }
  if (out != nullptr) key.add(*out);
  return key;
}

Tensor run(TensorRef x, FFTOptions options, std::optional<FFTType> type, Direction direction, const TensorView* out) {
  if (type) {
    if (options.fft_type && *options.fft_type != *type)
      throw InvalidArgument(fmt::format("{}: fft_type: expected {} for this function, got {}",
                                        *type == FFTType::c2c   ? "fft"
                                        : *type == FFTType::r2c ? "rfft"
                                                                : "irfft",
                                        to_string(*type), to_string(*options.fft_type)));
    options.fft_type = type;
  }
  // The resolved type goes into the key, so fft() and ifft() of one operand share a plan.
  options.fft_type = detail::resolve_fft_type(x.view().dtype(), options.fft_type);
  const detail::PlanKey key = make_key(x.view(), options, out);
  detail::PlanLease lease = detail::acquire_plan(key, [&] {
    std::optional<TensorView> hint;
    if (out != nullptr) hint = *out;
    auto impl = std::make_unique<detail::FftImpl>(x, options, hint);
    impl->plan(options.stream);
    return impl;
  });
  auto* impl = static_cast<detail::FftImpl*>(lease.get());
  try {
    if (lease.hit()) impl->swap_operand(x);
    ExecuteOptions exec;
    exec.direction = direction;
    exec.stream = options.stream;
    exec.after = options.after;
    if (out != nullptr) exec.out = *out;
    Tensor result = impl->execute(exec);
    impl->release_operand();  // the cache must not keep the caller's memory alive
    return result;
  } catch (...) {
    lease.discard();
    throw;
  }
}

}  // namespace

Tensor fft(TensorRef x, FFTOptions options) {
  // A real operand without fft_type gives an R2C transform, like the class form.
  return run(std::move(x), std::move(options), std::nullopt, Direction::forward, nullptr);
}
Tensor ifft(TensorRef x, FFTOptions options) {
  const bool c2r = options.fft_type == FFTType::c2r;
  return run(std::move(x), std::move(options), c2r ? std::nullopt : std::optional(FFTType::c2c), Direction::inverse,
             nullptr);
}
Tensor rfft(TensorRef x, FFTOptions options) {
  return run(std::move(x), std::move(options), FFTType::r2c, Direction::forward, nullptr);
}
Tensor irfft(TensorRef x, FFTOptions options) {
  return run(std::move(x), std::move(options), FFTType::c2r, Direction::inverse, nullptr);
}

void fft(TensorRef x, const TensorView& out, FFTOptions options) {
  run(std::move(x), std::move(options), std::nullopt, Direction::forward, &out);
}
void ifft(TensorRef x, const TensorView& out, FFTOptions options) {
  const bool c2r = options.fft_type == FFTType::c2r;
  run(std::move(x), std::move(options), c2r ? std::nullopt : std::optional(FFTType::c2c), Direction::inverse, &out);
}
void rfft(TensorRef x, const TensorView& out, FFTOptions options) {
  run(std::move(x), std::move(options), FFTType::r2c, Direction::forward, &out);
}
void irfft(TensorRef x, const TensorView& out, FFTOptions options) {
  run(std::move(x), std::move(options), FFTType::c2r, Direction::inverse, &out);
}

}  // namespace cuplan
