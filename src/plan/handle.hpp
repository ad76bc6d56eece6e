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
