// SPDX-License-Identifier: Apache-2.0
#pragma once
// A 128-bit hash of bytes that is the same in every process and on every run: two independent 64-bit FNV-1a streams
// (different offset bases). Plan caches compare callbacks by it and the on-disk kernel cache names its files by it,
// so a collision would hand one piece of code's plan or kernel to another.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cuplan::detail {

struct Hash128 {
  std::uint64_t a = 0xcbf29ce484222325ull;
  std::uint64_t b = 0x84222325cbf29ce4ull;
  void add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      a = (a ^ bytes[i]) * 0x100000001b3ull;
      b = (b ^ bytes[i]) * 0x100000001b3ull;
      b ^= b >> 29;
    }
  }
  void add(std::string_view text) {
    const std::uint64_t size = text.size();
    add(&size, sizeof size);  // length first: ("ab", "c") and ("a", "bc") differ
    add(text.data(), text.size());
  }
};

}  // namespace cuplan::detail
