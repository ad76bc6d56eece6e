// SPDX-License-Identifier: Apache-2.0
#pragma once
// fmt formatters for the distributed component's types, the counterpart of cuplan/format.hpp (which this header
// includes):
//   Decomposition "pencil", ExchangeMethod "copy_engine", InputLayout "transposed",
//   DistributedMatmulAlgorithm "allgather_gemm" (by to_string),
//   DistributedBox "box offset [0, 8, 0] extent [16, 8, 16]",
//   DistributedFFT, DistributedMatmul and Redistribute by describe() (their plan).
// Opt-in, as cuplan/format.hpp: cuplan/distributed.hpp, cuplan/distributed_matmul.hpp and cuplan/redistribute.hpp
// include no fmt; a file that formats their types with fmt includes this header.

#include <fmt/format.h>

#include <cstddef>
#include <string_view>

#include "cuplan/distributed.hpp"
#include "cuplan/distributed_matmul.hpp"
#include "cuplan/format.hpp"
#include "cuplan/redistribute.hpp"

template <>
struct fmt::formatter<cuplan::Decomposition> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(cuplan::Decomposition decomposition, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cuplan::to_string(decomposition), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::ExchangeMethod> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(cuplan::ExchangeMethod method, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cuplan::to_string(method), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::InputLayout> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(cuplan::InputLayout layout, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cuplan::to_string(layout), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::DistributedBox> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class Context>
  auto format(const cuplan::DistributedBox& box, Context& ctx) const {
    auto out = ctx.out();
    const char* label = "box offset [";
    for (const auto* axes : {&box.offset, &box.extent}) {
      out = fmt::format_to(out, "{}", label);
      for (std::size_t i = 0; i < axes->size(); ++i) out = fmt::format_to(out, "{}{}", i ? ", " : "", (*axes)[i]);
      label = "] extent [";
    }
    return fmt::format_to(out, "]");
  }
};

template <>
struct fmt::formatter<cuplan::DistributedFFT> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const cuplan::DistributedFFT& fft, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(fft.describe(), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::DistributedMatmulAlgorithm> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(cuplan::DistributedMatmulAlgorithm a, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cuplan::to_string(a), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::DistributedMatmul> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const cuplan::DistributedMatmul& m, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(m.describe(), ctx);
  }
};

template <>
struct fmt::formatter<cuplan::Redistribute> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const cuplan::Redistribute& r, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(r.describe(), ctx);
  }
};
