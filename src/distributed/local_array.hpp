// SPDX-License-Identifier: Apache-2.0
#pragma once
// A rank's local array as DistributedFFT, DistributedMatmul and Redistribute see it: the one check of an operand or
// an execute's `out`, so that the three refuse the same mistakes with the same message, and the one text of a shape.

#include <string>

#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail::dist {

/// "8x8x5" ("()" for rank 0), as the distributed messages write shapes.
std::string shape_text(const Shape& shape);

/// What one rank's local array must be.
struct LocalArraySpec {
  DType dtype;
  Shape shape;
  std::string role;       ///< what the shape is, for the message: "rank 1's input box: offset (4, 0, 0) extent ..."
  Device device;          ///< the communicator's device
  bool writable = false;  ///< the operation writes it (an `out`, an in-place operand)
};

/// InvalidArgument "<who>: <name>: expected a [writable ]contiguous <dtype> array of shape <shape> (<role>) in device
/// memory on <device>, got <view>: <what differs>" unless `view` has the spec's dtype and shape, is contiguous
/// row-major, is writable when the spec says so, and lies in device memory on the spec's device (an empty array may
/// lie anywhere: no byte of it is read or written).
void check_local_array(const TensorView& view, const char* who, const char* name, const LocalArraySpec& spec);

}  // namespace cuplan::detail::dist
