// SPDX-License-Identifier: Apache-2.0
#pragma once
// Names of cuplan's enums and error classes as text, for messages and logs, with no formatting library:
// to_string(MemorySpace::host_pinned) is "host_pinned", error_kind(error) is "InvalidArgument". cuplan/cuplan.hpp
// includes this header; the fmt formatters built on it are in cuplan/format.hpp, which a file includes when it
// formats cuplan types with fmt.

#include <string_view>

#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/enum_name.hpp"
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

/// The enumerator's name, e.g. "host_pinned", "odd", "optimized", "always", "warning", "cuda"; "?" for a value
/// outside the enumeration (which a cast can make).
constexpr std::string_view to_string(MemorySpace space) noexcept {
  return detail::enum_name<MemorySpace::managed>(space, {"host_pageable", "host_pinned", "device", "managed"});
}

constexpr std::string_view to_string(Parity parity) noexcept {
  return detail::enum_name<Parity::odd>(parity, {"even", "odd"});
}

/// "pageable" or "pinned".
constexpr std::string_view to_string(HostMemory memory) noexcept {
  return detail::enum_name<HostMemory::pinned>(memory, {"pageable", "pinned"});
}

/// "a", "b", "c", "bias" or "epilog_aux".
constexpr std::string_view to_string(MatmulOperand operand) noexcept {
  return detail::enum_name<MatmulOperand::epilog_aux>(operand, {"a", "b", "c", "bias", "epilog_aux"});
}

/// The dtype's name, e.g. "c64".
constexpr std::string_view to_string(DTypeCode code) noexcept {
  return DType(code).name();
}

constexpr std::string_view to_string(ResultLayout layout) noexcept {
  return detail::enum_name<ResultLayout::optimized>(layout, {"natural", "optimized"});
}

/// "estimate", "measure" or "patient".
constexpr std::string_view to_string(Planning planning) noexcept {
  return detail::enum_name<Planning::patient>(planning, {"estimate", "measure", "patient"});
}

/// "automatic", "owned", "shared" or "external".
constexpr std::string_view to_string(WorkAreaPolicy policy) noexcept {
  return detail::enum_name<WorkAreaPolicy::external>(policy, {"automatic", "owned", "shared", "external"});
}

constexpr std::string_view to_string(Blocking blocking) noexcept {
  return detail::enum_name<Blocking::always>(blocking, {"automatic", "always"});
}
constexpr std::string_view to_string(PlanningMode mode) noexcept {
  return detail::enum_name<PlanningMode::blocking>(mode, {"background", "blocking"});
}

constexpr std::string_view to_string(LogLevel level) noexcept {
  return detail::enum_name<LogLevel::warning>(level, {"debug", "info", "warning"});
}

constexpr std::string_view to_string(Execution::Kind kind) noexcept {
  return detail::enum_name<Execution::Kind::cpu>(kind, {"automatic", "cuda", "cpu"});
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
