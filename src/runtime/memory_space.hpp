// SPDX-License-Identifier: Apache-2.0
#pragma once
// "This memory space is host memory", said once for the library (TensorView::on_host() says it for a view).

#include "cuplan/device.hpp"

namespace cuplan::detail {

/// Pageable or pinned host memory; device and managed memory are not host memory.
constexpr bool is_host(MemorySpace space) noexcept {
  return space == MemorySpace::host_pageable || space == MemorySpace::host_pinned;
}

}  // namespace cuplan::detail
