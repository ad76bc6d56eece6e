// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: Matmul planning and CPU execution over memory that holds exactly each operand's span (strided,
// broadcast and negative layouts, every epilog, optional c and bias, out aliasing), under AddressSanitizer.

#include <complex>

#include "cuplan/cuplan.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  using namespace cuplan;
  FuzzedDataProvider in(bytes, size);
  const DType dtype = in.ConsumeBool() ? f32 : (in.ConsumeBool() ? f64 : c64);
  Shape shapes[5];
  Strides strides[5];
  fuzz::Backing backing[5];
  bool present[5] = {true, true, in.ConsumeBool(), in.ConsumeBool(), false};
  for (int i = 0; i < 4; ++i) {
    if (!present[i]) continue;
    fuzz::pick_layout(in, i == 3 ? 2 : 3, 6, shapes[i], strides[i]);
    if (!fuzz::back(backing[i], dtype, shapes[i], strides[i], 8192)) present[i] = false;
  }
  if (!present[0] || !present[1]) return 0;
  MatmulOptions o;
  o.execution = Execution::cpu(1);
  o.epilog = static_cast<Epilog>(in.ConsumeIntegralInRange<int>(0, 17));  // 16, 17: out of range on purpose
  o.compute = static_cast<Compute>(in.ConsumeIntegralInRange<int>(0, 4));
  o.beta = in.ConsumeBool() ? 1.0 : 0.0;
  o.alpha = in.ConsumeIntegralInRange<int>(-2, 2);
  o.conjugate_a = in.ConsumeBool();
  const auto view = [&](int i) { return TensorView(backing[i].data, dtype, shapes[i], strides[i]); };
  try {
    if (present[2]) o.c = TensorRef(view(2));
    if (present[3]) o.bias = TensorRef(view(3));
    Matmul m(view(0), view(1), o);
    m.plan();
    const Tensor d = m.execute();
    // Again into D's layout: a fresh buffer, or C itself when c has that layout (D over C).
    if (in.ConsumeBool() && present[2]) {
      (void)m.execute({.out = view(2)});
    } else {
      fuzz::Backing out;
      if (fuzz::back(out, d.dtype(), d.shape(), d.strides(), 1 << 16))
        (void)m.execute({.out = TensorView(out.data, d.dtype(), d.shape(), d.strides())});
    }
  } catch (const cuplan::Error&) {
  }
  return 0;
}
