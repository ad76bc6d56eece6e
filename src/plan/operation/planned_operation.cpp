// SPDX-License-Identifier: Apache-2.0
#include "plan/operation/planned_operation.hpp"

#include <fmt/format.h>

#include "base/log.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {

void PlannedOperation::adopt_operand(TensorRef&& operand) noexcept {
  operand_ = std::move(operand);
  state_.set_operand(true);
}

void PlannedOperation::release_operand() {
  state_.require_alive("release_operand");
  operand_ = TensorRef{};
  state_.set_operand(false);
}

const TensorRef& PlannedOperation::checked_given_out(const TensorRef& out, bool inplace, const char* method) const {
  require_defined(out, method, "out");
  if (inplace)
    throw InvalidArgument(fmt::format("{}: out: an output cannot be given for an in-place transform", method));
  const TensorView& view = out.view();
  check_writable(view, "out", method);
  if (!out_signature_.matches(view)) [[unlikely]] {
    check_no_self_overlap(view, "out", name_);
    out_signature_.require_match(view, name_, "execute", "out");
  }
  return out;
}

void PlannedOperation::mark_planned() {
  state_.set_planned(true);
  log(LogLevel::info, "{}: planned {}", name_, describe());
}

OperationCall PlannedOperation::route_call(const std::optional<StreamRef>& stream, const EventList& after,
                                           const TensorRef* out, bool release_workspace) const {
  if (out != nullptr) check_no_overlap(out->view(), "out", operand_.view(), "operand", name_);
  return {.stream = stream, .after = after, .out = out, .release_workspace = release_workspace, .operand = operand_};
}

}  // namespace cuplan::detail
