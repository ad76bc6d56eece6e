// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: TensorView(const DLTensor&) with every field drawn from the input (null pointers, negative or
// huge ndim and extents, any dtype and device), then the view's own queries and a copy out of it.

#include <vector>

#include "cuplan/cuplan.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  using namespace cuplan;
  using namespace cuplan::dlpack;
  FuzzedDataProvider in(bytes, size);
  static std::vector<std::uint64_t> memory(1 << 14);  // the data a DLTensor may point at
  DLTensor t{};
  t.ndim = in.ConsumeIntegralInRange<std::int32_t>(-3, 40);
  std::vector<std::int64_t> shape(64), strides(64);
  for (auto& e : shape)
    e = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(0, 8) : in.ConsumeIntegral<std::int64_t>();
  for (auto& s : strides) s = in.ConsumeIntegralInRange<std::int64_t>(-64, 64);
  t.shape = in.ConsumeBool() ? shape.data() : nullptr;
  t.strides = in.ConsumeBool() ? strides.data() : nullptr;
  t.data = in.ConsumeBool() ? static_cast<void*>(memory.data() + memory.size() / 2) : nullptr;
  t.byte_offset = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<std::uint64_t>(0, 64);
  t.dtype.code = in.ConsumeIntegral<std::uint8_t>() % 8;
  t.dtype.bits = in.ConsumeBool() ? 32 : in.ConsumeIntegral<std::uint8_t>();
  t.dtype.lanes = in.ConsumeBool() ? 1 : in.ConsumeIntegral<std::uint16_t>();
  t.device.device_type = in.ConsumeBool() ? kDLCPU : static_cast<DLDeviceType>(in.ConsumeIntegralInRange<int>(0, 20));
  t.device.device_id = in.ConsumeIntegralInRange<std::int32_t>(-2, 2);
  try {
    const TensorView view(t);
    (void)view.numel();
    (void)view.span_bytes();
    (void)view.is_contiguous();
    // Copy out only views whose span lies inside `memory` (a DLTensor may legally point anywhere it owns).
    const auto* base = reinterpret_cast<const std::byte*>(memory.data());
    const auto* end = base + memory.size() * sizeof(std::uint64_t);
    // The copy's target is dense: a broadcast view (stride 0) spans a few bytes however many elements it has, so
    // both the span and the dense size are bounded.
    const auto dense_bytes = static_cast<double>(view.numel()) * static_cast<double>(view.dtype().size());
    if (view.on_host() && view.numel() > 0 && view.span_bytes() <= 32768 && dense_bytes <= 32768) {
      std::int64_t lowest = 0;
      for (int a = 0; a < view.ndim(); ++a)
        if (view.strides()[a] < 0) lowest += (view.shape()[a] - 1) * view.strides()[a];
      const auto* first =
          static_cast<const std::byte*>(view.data()) + lowest * static_cast<std::int64_t>(view.dtype().size());
      if (first >= base && first + view.span_bytes() <= end) {
        Tensor host = Tensor::empty(view.shape(), view.dtype());
        copy(view, host.view());
      }
    }
  } catch (const cuplan::Error&) {
  }
  return 0;
}
