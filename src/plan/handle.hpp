// SPDX-License-Identifier: Apache-2.0
#pragma once
// The class forms (FFT, Matmul, the distributed classes) are move-only handles over an implementation object; these
// are the one check every forwarding member makes before it reaches the object.

#include <fmt/format.h>

#include <memory>
#include <string_view>

#include "cuplan/errors.hpp"

namespace cuplan::detail {

/// The object behind a handle, for `method`: StateError "<who><method>: the object was moved from" when the handle
/// was moved from. `who` ends with the separator its class's messages use: "FFT.", "DistributedFFT::".
template <class Impl>
Impl& held(const std::unique_ptr<Impl>& impl, const char* who, const char* method) {
  if (!impl) [[unlikely]]
    throw StateError(fmt::format("{}{}: the object was moved from", who, method));
  return *impl;
}

/// As held, and not freed (the object's own StateError): for members that only read the plan.
template <class Impl>
Impl& live(const std::unique_ptr<Impl>& impl, const char* who, const char* method) {
  Impl& object = held(impl, who, method);
  object.require_alive(method);
  return object;
}

/// The lifecycle state a handle's state() reports: "moved-from", "freed" or "live".
template <class Impl>
std::string_view lifecycle_state(const std::unique_ptr<Impl>& impl) noexcept {
  if (!impl) return "moved-from";
  return impl->freed() ? "freed" : "live";
}

}  // namespace cuplan::detail

// The members every class form defines the same way, forwarding to its `impl_` (a std::unique_ptr to the Impl) with
// the checks above; `Class` names the public class, and its messages say "<Class>.<method>". Used at namespace scope
// inside cuplan's ABI namespace, in the operation's own source file, beside the members that are its own.

/// Move construction and assignment (assignment frees this object's plan first), the destructor and free(), all
/// noexcept: a moved-from handle holds no Impl, and free() on it does nothing.
#define CUPLAN_HANDLE_LIFETIME(Class)               \
  Class::Class(Class&&) noexcept = default;         \
  Class& Class::operator=(Class&& other) noexcept { \
    if (this != &other) {                           \
      free();                                       \
      impl_ = std::move(other.impl_);               \
    }                                               \
    return *this;                                   \
  }                                                 \
  Class::~Class() {                                 \
    free();                                         \
  }                                                 \
  void Class::free() noexcept {                     \
    if (impl_) impl_->free();                       \
  }

/// The result queries and describe(); `shape`, `dtype` and `strides` are the Impl's expressions for them.
#define CUPLAN_HANDLE_RESULT(Class, shape, dtype, strides)                      \
  Shape Class::result_shape() const {                                           \
    return ::cuplan::detail::live(impl_, #Class ".", "result_shape").shape;     \
  }                                                                             \
  DType Class::result_dtype() const {                                           \
    return ::cuplan::detail::live(impl_, #Class ".", "result_dtype").dtype;     \
  }                                                                             \
  Strides Class::result_strides() const {                                       \
    return ::cuplan::detail::live(impl_, #Class ".", "result_strides").strides; \
  }                                                                             \
  std::string Class::describe() const {                                         \
    return ::cuplan::detail::live(impl_, #Class ".", "describe").describe();    \
  }

/// The whole shell of a one-operand transform (FFT, RealTransform, Convolution): lifetime, the phases plan, execute
/// (taking `ExecuteOptions`), reset_operand and release_operand, axes(), uses_cuda(), workspace_size() and the result
/// queries. `layout` is the Impl's accessor of its planned layout (decision(), geometry()).
#define CUPLAN_OPERATION_HANDLE(Class, ExecuteOptions, layout, shape, dtype, strides)                     \
  CUPLAN_HANDLE_LIFETIME(Class)                                                                           \
  void Class::plan(std::optional<StreamRef> stream) {                                                     \
    ::cuplan::detail::live(impl_, #Class ".", "plan").plan(stream);                                       \
  }                                                                                                       \
  Tensor Class::execute(ExecuteOptions options) {                                                         \
    return ::cuplan::detail::held(impl_, #Class ".", "execute").execute(options);                         \
  }                                                                                                       \
  void Class::reset_operand(TensorRef operand, std::optional<StreamRef> stream) {                         \
    ::cuplan::detail::live(impl_, #Class ".", "reset_operand").reset_operand(std::move(operand), stream); \
  }                                                                                                       \
  void Class::release_operand() {                                                                         \
    ::cuplan::detail::live(impl_, #Class ".", "release_operand").release_operand();                       \
  }                                                                                                       \
  const std::vector<int>& Class::axes() const {                                                           \
    return ::cuplan::detail::live(impl_, #Class ".", "axes").layout().axes;                               \
  }                                                                                                       \
  bool Class::uses_cuda() const {                                                                         \
    return ::cuplan::detail::live(impl_, #Class ".", "uses_cuda").target().cuda;                          \
  }                                                                                                       \
  std::size_t Class::workspace_size() const {                                                             \
    return ::cuplan::detail::live(impl_, #Class ".", "workspace_size").workspace_size();                  \
  }                                                                                                       \
  CUPLAN_HANDLE_RESULT(Class, layout().shape, layout().dtype, layout().strides)
