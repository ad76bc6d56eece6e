// SPDX-License-Identifier: Apache-2.0
#pragma once
// The library's access to the ownership that the public types keep private: a Tensor's Storage and a StreamRef's
// StreamHandle. The public headers only declare this struct (as a friend), so no detail type appears in the API or
// among the exported symbols.

#include <memory>
#include <utility>

#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/stream_handle.hpp"

namespace cuplan::detail {

class Storage;

struct Access {
  static const std::shared_ptr<Storage>& storage(const Tensor& tensor) noexcept { return tensor.storage_; }
  static const std::shared_ptr<Storage>& storage(const TensorRef& ref) noexcept { return ref.storage_; }
  /// True for a TensorRef made from an undefined Tensor (runtime/undefined_operand.hpp).
  static bool undefined(const TensorRef& ref) noexcept { return ref.undefined_; }
  /// A Tensor over `view` owned by `storage` (null: a wrap that owns nothing).
  static Tensor make_tensor(TensorView view, std::shared_ptr<Storage> storage) {
    Tensor tensor;
    tensor.view_ = std::move(view);
    tensor.storage_ = std::move(storage);
    return tensor;
  }
  /// Owner of a cuplan-made stream, or null.
  static StreamHandle* owner(StreamRef stream) noexcept { return stream.owner_; }
  /// A share in the owner of a cuplan-made stream (keeps it alive), or null.
  static std::shared_ptr<StreamHandle> retain(StreamRef stream) {
    return stream.owner_ != nullptr ? stream.owner_->shared_from_this() : nullptr;
  }
  /// True when the handle cannot be destroyed and reused while a user holds it: a cuplan-made stream.
  static bool owned(StreamRef stream) noexcept { return stream.owner_ != nullptr; }
};

}  // namespace cuplan::detail
