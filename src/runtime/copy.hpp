// SPDX-License-Identifier: Apache-2.0
#pragma once
// The runtime's copy primitive behind cuplan::copy (declared in cuplan/tensor.hpp, defined in the plan layer, which
// adds the staging engine for large pageable host <-> device copies). Tensor::to and the plan layer's fallback call
// it directly.

#include <optional>

#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail {

/// InvalidArgument unless dst has src's dtype and shape and does not overlap itself.
void check_copy_operands(const TensorView& src, const TensorView& dst);
/// The stream a copy that involves device memory runs on (`stream`, else the current stream of the device side),
/// checked to belong to a device of the copy (InvalidArgument); NotSupported without CUDA.
StreamRef copy_stream(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream);
/// The device `stream` belongs to (the device side's device for a default-stream handle).
Device copy_stream_device(const TensorView& src, const TensorView& dst, StreamRef stream);
/// Any two memory spaces and layouts; blocking when a host side is involved. Device -> device copies record the
/// stream on the owners given (may be null).
void copy_primitive(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream,
                    const TensorRef* src_owner, const TensorRef* dst_owner);

}  // namespace cuplan::detail
