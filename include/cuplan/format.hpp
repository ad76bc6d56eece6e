#pragma once
// fmt formatters for cuplan's value types and errors, so that `fmt::format("{}", tensor)` reads well in logs:
//   DType "c64", Device "cuda:0", MemorySpace "host_pinned", Dims "[64, 256]",
//   TensorView "TensorView(c64, shape=[64, 256], strides=[256, 1], device=cuda:0, memory=device)",
//   Tensor "Tensor(c64, shape=[64, 256], strides=[256, 1], device=cuda:0, memory=device, owning)",
//   Error "InvalidArgument: <message>".

#include <fmt/format.h>

#include <string_view>
#include <type_traits>

#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {

constexpr std::string_view to_string(MemorySpace space) noexcept {
  switch (space) {
    case MemorySpace::host_pageable:
      return "host_pageable";
    case MemorySpace::host_pinned:
      return "host_pinned";
    case MemorySpace::device:
      return "device";
    case MemorySpace::managed:
      return "managed";
  }
  return "?";
}

/// The most derived cuplan error class of `error`, e.g. "CudaError".
inline std::string_view error_kind(const Error& error) noexcept {
  if (dynamic_cast<const CudaError*>(&error)) return "CudaError";
  if (dynamic_cast<const LibraryError*>(&error)) return "LibraryError";
  if (dynamic_cast<const InvalidArgument*>(&error)) return "InvalidArgument";
  if (dynamic_cast<const NotSupported*>(&error)) return "NotSupported";
  if (dynamic_cast<const StateError*>(&error)) return "StateError";
  if (dynamic_cast<const OutOfMemory*>(&error)) return "OutOfMemory";
  if (dynamic_cast<const OrderingError*>(&error)) return "OrderingError";
  return "Error";
}

}  // namespace cuplan

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
struct fmt::formatter<cuplan::MemorySpace> : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format(cuplan::MemorySpace space, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(cuplan::to_string(space), ctx);
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
    return fmt::format_to(ctx.out(), "TensorView({}, shape={}, strides={}, device={}, memory={})", view.dtype(),
                          view.shape(), view.strides(), view.device(), view.memory_space());
  }
};

template <>
struct fmt::formatter<cuplan::Tensor> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const cuplan::Tensor& tensor, FormatContext& ctx) const {
    return fmt::format_to(ctx.out(), "Tensor({}, shape={}, strides={}, device={}, memory={}, {})", tensor.dtype(),
                          tensor.shape(), tensor.strides(), tensor.device(), tensor.memory_space(),
                          tensor.owning() ? "owning" : "wrapping");
  }
};

/// Every cuplan exception, by reference to its most derived class: "<kind>: <message>".
template <class E>
struct fmt::formatter<E, char, std::enable_if_t<std::is_base_of_v<cuplan::Error, E>>> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const E& error, FormatContext& ctx) const {
    return fmt::format_to(ctx.out(), "{}: {}", cuplan::error_kind(error), error.what());
  }
};
