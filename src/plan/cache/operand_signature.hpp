// SPDX-License-Identifier: Apache-2.0
#pragma once
// "The operand matches the plan", said once: what a plan fixes about one operand. The plan-cache key is built from
// it, reset_operand checks new operands against it and execute checks `out` against it, with one message format
// that names the operand, what differs, the planned value and the actual one.

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail {

struct OperandSignature {
  DType dtype;
  Shape shape;
  Strides strides;              ///< zero on axes of extent 1, whose stride is never used
  bool host = false;            ///< memory space class: host (pageable or pinned) or device (device or managed)
  int device = -1;              ///< CUDA device index of device memory, -1 for host memory
  std::uint32_t alignment = 1;  ///< alignment class (bytes, up to 16) the plan may assume

  /// The signature of `view`, with the alignment class of its pointer.
  static OperandSignature of(const TensorView& view) noexcept;
  /// The signature a result of `dtype`, `shape` and `strides` has in the given memory, for `out` checks.
  static OperandSignature result(DType dtype, const Shape& shape, const Strides& strides, bool host, int device,
                                 std::uint32_t alignment);

  /// True when `view` has this dtype, shape, strides (extent > 1 axes), memory space class and device, and a
  /// pointer aligned to at least `alignment`.
  bool matches(const TensorView& view) const noexcept;
  /// InvalidArgument "<who>.<method>: <operand> <what>: expected <planned> (as planned), got <actual>" for the first
  /// of dtype, shape, strides, memory and alignment in which `view` differs; nothing when it matches. A null
  /// `method` leaves it out; `strides_note` (if any) follows a strides mismatch, e.g. why that layout was planned.
  void require_match(const TensorView& view, const char* who, const char* method, const char* operand,
                     const char* strides_note = nullptr) const;
  friend bool operator==(const OperandSignature&, const OperandSignature&) = default;
};

/// "host memory" or "memory of cuda:N", for messages.
std::string memory_name(bool host, int device);

}  // namespace cuplan::detail
