// SPDX-License-Identifier: Apache-2.0
#pragma once
// fmt formatters for cuplan's value types and errors, so that `fmt::format("{}", tensor)` reads well in logs:
//   DType "c64", Device "cuda:0", MemorySpace "host_pinned", Dims "[64, 256]",
//   TensorView "TensorView(c64, shape=[64, 256], strides=[256, 1], device=cuda:0, memory=device)" (", read-only"
//   before the parenthesis when read_only()),
//   Tensor "Tensor(c64, shape=[64, 256], strides=[256, 1], device=cuda:0, memory=device, owning)",
//   Error "InvalidArgument: <message>" (each of the eight error classes of cuplan/errors.hpp),
//   enums by name (Direction "inverse", Epilog "gelu_bias", Compute "tf32", LogLevel "warning", ...),
//   Execution "automatic" / "cuda" / "cuda:1" / "cpu" / "cpu(threads=4)",
//   Stream "Stream(0x5581..., cuda:0, owning)" or "Stream(moved-from)", StreamRef "StreamRef(0x5581...)" or
//   "StreamRef(legacy default)", Event "Event(recorded, timing)",
//   AlgorithmInfo "algorithm 0 (id 21, tile 18, stages 8, split-k 1, ...)", EventRef "EventRef(0x...)",
//   PlanCacheStats "plan cache: 5 hits, 1 misses, ..., 0 B held", memory::Stats "device memory: 1024 B in use,
//   peak 4096 B, ...", memory::Report "memory of cuda:0: 1 shared work areas 536870912 B, ...", WorkAreaPolicy
//   "shared", FFT, Matmul, RealTransform and Convolution by describe() (their plan; "Convolution(freed)" or
//   "...(moved-from)" once they have none). (The distributed types: cuplan/distributed_format.hpp.)
// Opt-in: cuplan/cuplan.hpp does not include this header (nor fmt); a file that formats cuplan types with fmt
// includes it. The names the formatters print (to_string, error_kind) are in cuplan/names.hpp, which needs no fmt.

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <type_traits>

#include "cuplan/convolution.hpp"
#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/fft.hpp"
#include "cuplan/matmul.hpp"
#include "cuplan/memory.hpp"
#include "cuplan/names.hpp"
#include "cuplan/r2r.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

template <>
struct fmt::formatter<cuplan::DType> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(cuplan::DType dtype, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(dtype.name(), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::Device> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(cuplan::Device device, FormatContext& ctx) const {
    if (device.is_cpu()) return fmt::formatter<std::string_view>::format("cpu", ctx);
    char text[24];
    const auto end = fmt::format_to_n(text, sizeof(text), "cuda:{}", device.index()).out;
    return fmt::formatter<std::string_view>::format(std::string_view(text, static_cast<std::size_t>(end - text)), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::Dims> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::Dims& dims, FormatContext& ctx) const {
    auto out = fmt::format_to(ctx.out(), "[");
    for (int i = 0; i < dims.size(); ++i) {
      if (i > 0) out = fmt::format_to(out, ", ");
      out = fmt::format_to(out, "{}", dims[i]);
    }
    return fmt::format_to(out, "]");
  }
};

template <>
struct fmt::formatter<cuplan::TensorView> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::TensorView& view, FormatContext& ctx) const {
    return fmt::format_to(ctx.out(), "TensorView({}, shape={}, strides={}, device={}, memory={}{})", view.dtype(),
                          view.shape(), view.strides(), view.device(), view.memory_space(),
                          view.read_only() ? ", read-only" : "");
  }
};

template <>
struct fmt::formatter<cuplan::Tensor> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::Tensor& tensor, FormatContext& ctx) const {
    // A default-constructed Tensor (an output an epilog did not produce) has no dtype, shape or memory to show.
    if (!tensor.defined()) return fmt::format_to(ctx.out(), "Tensor(undefined)");
    return fmt::format_to(ctx.out(), "Tensor({}, shape={}, strides={}, device={}, memory={}, {}{})", tensor.dtype(),
                          tensor.shape(), tensor.strides(), tensor.device(), tensor.memory_space(),
                          tensor.owning() ? "owning" : "wrapping", tensor.read_only() ? ", read-only" : "");
  }
};

namespace cuplan::detail {
/// Formats a cuplan exception as "<kind>: <message>", the kind being its most derived class (error_kind).
struct ErrorFormatter {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const Error& error, FormatContext& ctx) const {
    return fmt::format_to(ctx.out(), "{}: {}", error_kind(error), error.what());
  }
};

/// Formats any enum that has a cuplan::to_string overload, by name.
template <class Enum>
struct EnumFormatter : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(Enum value, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(cuplan::to_string(value)), ctx);
  }
};

/// The name of a default-stream handle, or null for any other stream.
inline const char* default_stream_name(cudaStream_t handle) noexcept {
  if (handle == nullptr) return "default";
  if (handle == cudaStreamLegacy) return "legacy default";
  if (handle == cudaStreamPerThread) return "per-thread default";
  return nullptr;
}
}  // namespace cuplan::detail

// Every cuplan exception class, "<kind>: <message>". Full specializations, one per class: fmt 10 and later format
// every std::exception in <fmt/std.h> through a partial specialization, and a partial one of cuplan's own would be
// ambiguous with it. An Error formatted through a reference to a base class still names its most derived class.
template <>
struct fmt::formatter<cuplan::Error> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::InvalidArgument> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::NotSupported> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::StateError> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::OutOfMemory> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::OrderingError> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::LibraryError> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::CudaError> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::CallbackError> : cuplan::detail::ErrorFormatter {};
template <>
struct fmt::formatter<cuplan::TimeoutError> : cuplan::detail::ErrorFormatter {};

template <>
struct fmt::formatter<cuplan::Direction> : cuplan::detail::EnumFormatter<cuplan::Direction> {};
template <>
struct fmt::formatter<cuplan::Normalization> : cuplan::detail::EnumFormatter<cuplan::Normalization> {};
template <>
struct fmt::formatter<cuplan::Parity> : cuplan::detail::EnumFormatter<cuplan::Parity> {};
template <>
struct fmt::formatter<cuplan::ResultLayout> : cuplan::detail::EnumFormatter<cuplan::ResultLayout> {};
template <>
struct fmt::formatter<cuplan::Planning> : cuplan::detail::EnumFormatter<cuplan::Planning> {};
template <>
struct fmt::formatter<cuplan::Blocking> : cuplan::detail::EnumFormatter<cuplan::Blocking> {};
template <>
struct fmt::formatter<cuplan::PlanningMode> : cuplan::detail::EnumFormatter<cuplan::PlanningMode> {};
template <>
struct fmt::formatter<cuplan::WorkAreaPolicy> : cuplan::detail::EnumFormatter<cuplan::WorkAreaPolicy> {};
template <>
struct fmt::formatter<cuplan::LogLevel> : cuplan::detail::EnumFormatter<cuplan::LogLevel> {};
template <>
struct fmt::formatter<cuplan::Epilog> : cuplan::detail::EnumFormatter<cuplan::Epilog> {};
template <>
struct fmt::formatter<cuplan::Compute> : cuplan::detail::EnumFormatter<cuplan::Compute> {};
template <>
struct fmt::formatter<cuplan::HostMemory> : cuplan::detail::EnumFormatter<cuplan::HostMemory> {};
template <>
struct fmt::formatter<cuplan::MatmulOperand> : cuplan::detail::EnumFormatter<cuplan::MatmulOperand> {};
template <>
struct fmt::formatter<cuplan::DTypeCode> : cuplan::detail::EnumFormatter<cuplan::DTypeCode> {};
template <>
struct fmt::formatter<cuplan::MemorySpace> : cuplan::detail::EnumFormatter<cuplan::MemorySpace> {};

template <>
struct fmt::formatter<cuplan::Execution> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::Execution& execution, FormatContext& ctx) const {
    auto out = fmt::format_to(ctx.out(), "{}", cuplan::to_string(execution.kind()));
    if (execution.kind() == cuplan::Execution::Kind::cuda && execution.device() >= 0)
      out = fmt::format_to(out, ":{}", execution.device());
    if (execution.kind() == cuplan::Execution::Kind::cpu && execution.threads() > 0)
      out = fmt::format_to(out, "(threads={})", execution.threads());
    return out;
  }
};

template <>
struct fmt::formatter<cuplan::StreamRef> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::StreamRef& stream, FormatContext& ctx) const {
    if (const char* name = cuplan::detail::default_stream_name(stream.native()))
      return fmt::format_to(ctx.out(), "StreamRef({})", name);
    return fmt::format_to(ctx.out(), "StreamRef({})", static_cast<const void*>(stream.native()));
  }
};

template <>
struct fmt::formatter<cuplan::Stream> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::Stream& stream, FormatContext& ctx) const {
    if (!stream.valid()) return fmt::format_to(ctx.out(), "Stream(moved-from)");
    const char* name = cuplan::detail::default_stream_name(stream.native());
    const std::string handle =
        name != nullptr ? std::string(name) : fmt::format("{}", static_cast<const void*>(stream.native()));
    return fmt::format_to(ctx.out(), "Stream({}, {}, {})", handle, stream.device(),
                          stream.owning() ? "owning" : "not owning");
  }
};

template <>
struct fmt::formatter<cuplan::Event> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::Event& event, FormatContext& ctx) const {
    if (event.native() == nullptr) return fmt::format_to(ctx.out(), "Event(moved-from)");
    return fmt::format_to(ctx.out(), "Event({}, {})", event.recorded() ? "recorded" : "not recorded",
                          event.timing() ? "timing" : "no timing");
  }
};

template <>
struct fmt::formatter<cuplan::AlgorithmInfo> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::AlgorithmInfo& info, FormatContext& ctx) const {
    auto out =
        fmt::format_to(ctx.out(), "algorithm {} (id {}, tile {}, stages {}, split-k {}, workspace {} B", info.index,
                       info.algorithm_id, info.tile, info.stages, info.split_k, info.workspace_bytes);
    if (info.measured_ms) out = fmt::format_to(out, ", {:.4f} ms", *info.measured_ms);
    return fmt::format_to(out, ")");
  }
};

template <>
struct fmt::formatter<cuplan::EventRef> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::EventRef& event, FormatContext& ctx) const {
    return fmt::format_to(ctx.out(), "EventRef({})", static_cast<const void*>(event.native()));
  }
};

template <>
struct fmt::formatter<cuplan::PlanCacheStats> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::PlanCacheStats& stats, FormatContext& ctx) const {
    auto out =
        fmt::format_to(ctx.out(), "plan cache: {} hits, {} misses, {} evictions, {} plans (capacity {}), {} B held",
                       stats.hits, stats.misses, stats.evictions, stats.size, stats.capacity, stats.bytes);
    if (stats.byte_limit == cuplan::plan_cache::no_byte_limit) return out;
    return fmt::format_to(out, " (limit {} B, {} idle plans' memory released)", stats.byte_limit,
                          stats.work_areas_released);
  }
};

template <>
struct fmt::formatter<cuplan::memory::Stats> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::memory::Stats& stats, FormatContext& ctx) const {
    return fmt::format_to(
        ctx.out(), "device memory: {} B in use, peak {} B, {} allocations, {} deallocations, pool reserves {} B",
        stats.bytes_in_use, stats.peak_bytes, stats.allocations, stats.deallocations, stats.pool_reserved);
  }
};

template <>
struct fmt::formatter<cuplan::memory::Report> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::memory::Report& r, FormatContext& ctx) const {
    return fmt::format_to(ctx.out(),
                          "memory of {}: {} shared work areas {} B, {} owned work areas {} B, {} cached plans {} B, "
                          "{} B in use on the device; host: staging rings {} B, pinned cache {} B live {} B idle",
                          r.device, r.shared_work_areas, r.shared_work_area_bytes, r.owned_work_areas,
                          r.owned_work_area_bytes, r.cached_plans, r.cached_plan_bytes, r.device_bytes_in_use,
                          r.staging_ring_bytes, r.pinned_cache_live_bytes, r.pinned_cache_idle_bytes);
  }
};

namespace cuplan::detail {
inline constexpr char fft_type_name[] = "FFT";
inline constexpr char matmul_type_name[] = "Matmul";
inline constexpr char real_transform_type_name[] = "RealTransform";
inline constexpr char convolution_type_name[] = "Convolution";
/// Formats an object by its describe(): its plan (FFT, Matmul, RealTransform, Convolution). A moved-from or freed
/// object has no plan to describe (describe() throws StateError for it): it prints as "FFT(moved-from)" or "FFT(freed)"
/// instead, so that a log line never throws.
template <class Object, const char* TypeName>
struct DescribedFormatter : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(const Object& object, FormatContext& ctx) const {
    const std::string_view state = object.state();
    const std::string text = state == "live" ? object.describe() : fmt::format("{}({})", TypeName, state);
    return fmt::formatter<std::string_view>::format(text, ctx);
  }
};
}  // namespace cuplan::detail

template <>
struct fmt::formatter<cuplan::FFT> : cuplan::detail::DescribedFormatter<cuplan::FFT, cuplan::detail::fft_type_name> {};
template <>
struct fmt::formatter<cuplan::Matmul>
    : cuplan::detail::DescribedFormatter<cuplan::Matmul, cuplan::detail::matmul_type_name> {};
template <>
struct fmt::formatter<cuplan::FFTType> : cuplan::detail::EnumFormatter<cuplan::FFTType> {};
template <>
struct fmt::formatter<cuplan::RealTransform>
    : cuplan::detail::DescribedFormatter<cuplan::RealTransform, cuplan::detail::real_transform_type_name> {};
template <>
struct fmt::formatter<cuplan::FFTRoute> : cuplan::detail::EnumFormatter<cuplan::FFTRoute> {};
template <>
struct fmt::formatter<cuplan::R2RKind> : cuplan::detail::EnumFormatter<cuplan::R2RKind> {};
template <>
struct fmt::formatter<cuplan::R2RNorm> : cuplan::detail::EnumFormatter<cuplan::R2RNorm> {};
template <>
struct fmt::formatter<cuplan::Convolution>
    : cuplan::detail::DescribedFormatter<cuplan::Convolution, cuplan::detail::convolution_type_name> {};
template <>
struct fmt::formatter<cuplan::ConvolutionMode> : cuplan::detail::EnumFormatter<cuplan::ConvolutionMode> {};
template <>
struct fmt::formatter<cuplan::ConvolutionRoute> : cuplan::detail::EnumFormatter<cuplan::ConvolutionRoute> {};
