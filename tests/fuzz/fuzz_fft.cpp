// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the FFT planner (plan_layout, every option) and, for small views, a real CPU transform over
// memory that holds exactly the view's span, so that AddressSanitizer sees any access outside it.

#include "fft/planner.hpp"

#include <cstdlib>

#include "cuplan/cuplan.hpp"
#include "fuzz_common.hpp"

namespace {

std::int64_t numel(const cuplan::Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t e : shape) n *= e;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  using namespace cuplan;
  FuzzedDataProvider in(bytes, size);
  detail::LayoutRequest r;
  r.dtype = fuzz::pick_dtype(in);
  fuzz::pick_layout(in, 4, 9, r.shape, r.strides);
  const int axis_count = in.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < axis_count; ++i) r.axes.push_back(in.ConsumeIntegralInRange<int>(-5, 5));
  if (in.ConsumeBool()) r.type = static_cast<FFTType>(in.ConsumeIntegralInRange<int>(0, 2));
  r.parity = in.ConsumeBool() ? Parity::odd : Parity::even;
  r.inplace = in.ConsumeBool();
  r.result_layout = in.ConsumeBool() ? ResultLayout::optimized : ResultLayout::natural;
  r.stage_input = in.ConsumeBool();
  r.stage_output = in.ConsumeBool();
  r.loop_is_costly = in.ConsumeBool();
  r.aligned_real_calls = in.ConsumeBool();
  const bool with_out = in.ConsumeBool();
  Strides out_strides;
  if (with_out) {
    Shape out_shape;
    fuzz::pick_layout(in, 4, 9, out_shape, out_strides);
  }
  try {
    const detail::LayoutDecision d = detail::plan_layout(r);
    // Every result element is scaled exactly once by the output walk.
    if (detail::output_walk(d.layout, d.type).count() != numel(d.out_shape)) std::abort();
  } catch (const cuplan::Error&) {
  }

  // A real transform on the CPU (FFTW) over memory holding exactly the operand's span.
  if (r.dtype.is_integer() || r.dtype == f16 || r.dtype == bf16) return 0;
  fuzz::Backing operand;
  if (!fuzz::back(operand, r.dtype, r.shape, r.strides, 4096)) return 0;
  try {
    FFTOptions options{.axes = r.axes,
                       .last_axis_parity = r.parity,
                       .inplace = r.inplace,
                       .result_layout = r.result_layout,
                       .execution = Execution::cpu(1)};
    options.fft_type = r.type;
    const TensorView x(operand.data, r.dtype, r.shape, r.strides);
    FFT plan(x, options);
    plan.plan();
    if (with_out && !r.inplace && out_strides.size() == plan.result_shape().size()) {
      fuzz::Backing out;
      if (!fuzz::back(out, plan.result_dtype(), plan.result_shape(), out_strides, 4096)) return 0;
      plan.execute({.out = TensorView(out.data, plan.result_dtype(), plan.result_shape(), out_strides)});
    } else {
      (void)plan.execute();
    }
  } catch (const cuplan::Error&) {
  }
  return 0;
}
