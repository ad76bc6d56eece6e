// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU side of a RealTransform's scaling: orthogonalize's factors on the first and last element along each
// transformed axis, and the norm's overall factor, applied to host memory in place.

#include "cuplan/tensor.hpp"
#include "r2r/planner.hpp"

namespace cuplan::detail {

/// Multiplies `data` (the decision's dtype and shape, `strides`) by orthogonalize's input factors of `direction`.
void scale_input_edges(void* data, const Strides& strides, const R2RDecision& decision, Direction direction);
/// Multiplies it by the output factors of `direction` and the overall factor of its norm.
void scale_output(void* data, const Strides& strides, const R2RDecision& decision, Direction direction);

}  // namespace cuplan::detail
