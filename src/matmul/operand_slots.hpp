// SPDX-License-Identifier: Apache-2.0
#pragma once
// The operand slots of a product (A, B, C, bias, epilog_aux): what MatmulImpl holds and its route reads.

#include <array>
#include <optional>

#include "cuplan/tensor.hpp"
#include "plan/cache/operand_signature.hpp"

namespace cuplan::detail::mm {

/// The operand slots of a product, in the order of MatmulOperand.
enum Slot { slot_a, slot_b, slot_c, slot_bias, slot_aux, slot_count };

/// One operand slot of a product.
struct OperandSlot {
  std::optional<TensorRef> ref;
  std::optional<OperandSignature> planned;  ///< what a new operand must match (unset: not part of the product)
};
using OperandSlots = std::array<OperandSlot, slot_count>;

}  // namespace cuplan::detail::mm
