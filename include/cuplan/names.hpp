// SPDX-License-Identifier: Apache-2.0
#pragma once
// Names of cuplan's enums and error classes as text, for messages and logs, with no formatting library:
// to_string(MemorySpace::host_pinned) is "host_pinned", error_kind(error) is "InvalidArgument". cuplan/cuplan.hpp
// includes this header; the fmt formatters built on it are in cuplan/format.hpp, which a file includes when it
// formats cuplan types with fmt.

#include <cstddef>
#include <iterator>
#include <string_view>

#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/fft.hpp"
#include "cuplan/matmul.hpp"
#include "cuplan/memory.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// \name Names of enums
/// @{

/// The enumerator's name, e.g. "host_pinned", "odd", "optimized", "always", "warning", "cuda".
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

constexpr std::string_view to_string(Parity parity) noexcept {
  return parity == Parity::even ? "even" : "odd";
}

/// "pageable" or "pinned".
constexpr std::string_view to_string(HostMemory memory) noexcept {
  return memory == HostMemory::pinned ? "pinned" : "pageable";
}

/// "a", "b", "c", "bias" or "epilog_aux".
constexpr std::string_view to_string(MatmulOperand operand) noexcept {
  switch (operand) {
    case MatmulOperand::a:
      return "a";
    case MatmulOperand::b:
      return "b";
    case MatmulOperand::c:
      return "c";
    case MatmulOperand::bias:
      return "bias";
    case MatmulOperand::epilog_aux:
      return "epilog_aux";
  }
  return "?";
}

/// The dtype's name, e.g. "c64".
constexpr std::string_view to_string(DTypeCode code) noexcept {
  return DType(code).name();
}

constexpr std::string_view to_string(ResultLayout layout) noexcept {
  return layout == ResultLayout::natural ? "natural" : "optimized";
}

/// "estimate", "measure" or "patient".
constexpr std::string_view to_string(Planning planning) noexcept {
  switch (planning) {
    case Planning::estimate:
      return "estimate";
    case Planning::measure:
      return "measure";
    case Planning::patient:
      return "patient";
  }
  return "?";
}

/// "automatic", "owned", "shared" or "external"; "?" outside the enum.
constexpr std::string_view to_string(WorkAreaPolicy policy) noexcept {
  constexpr std::string_view names[] = {"automatic", "owned", "shared", "external"};
  const auto index = static_cast<std::size_t>(policy);
  return index < std::size(names) ? names[index] : "?";
}

constexpr std::string_view to_string(Blocking blocking) noexcept {
  return blocking == Blocking::automatic ? "automatic" : "always";
}
constexpr std::string_view to_string(PlanningMode mode) noexcept {
  return mode == PlanningMode::background ? "background" : "blocking";
}

constexpr std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warning:
      return "warning";
  }
  return "?";
}

constexpr std::string_view to_string(Execution::Kind kind) noexcept {
  switch (kind) {
    case Execution::Kind::automatic:
      return "automatic";
    case Execution::Kind::cuda:
      return "cuda";
    case Execution::Kind::cpu:
      return "cpu";
  }
  return "?";
}
/// @}

/// The most derived cuplan error class of `error`, e.g. "CudaError".
inline std::string_view error_kind(const Error& error) noexcept {
  if (dynamic_cast<const CudaError*>(&error)) return "CudaError";
  if (dynamic_cast<const LibraryError*>(&error)) return "LibraryError";
  if (dynamic_cast<const TimeoutError*>(&error)) return "TimeoutError";
  if (dynamic_cast<const CallbackError*>(&error)) return "CallbackError";  // before its base, InvalidArgument
  if (dynamic_cast<const InvalidArgument*>(&error)) return "InvalidArgument";
  if (dynamic_cast<const NotSupported*>(&error)) return "NotSupported";
  if (dynamic_cast<const StateError*>(&error)) return "StateError";
  if (dynamic_cast<const OutOfMemory*>(&error)) return "OutOfMemory";
  if (dynamic_cast<const OrderingError*>(&error)) return "OrderingError";
  return "Error";
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
