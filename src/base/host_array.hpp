// SPDX-License-Identifier: Apache-2.0
#pragma once
// Host scratch of the library's own whose size follows the operands (FFTW's planning arrays and work buffers,
// operand copies for BLAS): allocated without throwing, as Storage::allocate allocates host memory, so that a
// request the host cannot serve is cuplan's OutOfMemory naming the buffer and the bytes, never the standard
// library's std::bad_alloc or std::length_error (and a sanitizer's allocator, which ends the process where a
// throwing new fails, returns null here too). Fault injection's `host` site covers it (base/fault_injection.hpp).

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include "base/fault_injection.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {

/// The host's memory and swap in bytes, 0 where unknown. A buffer larger than this can never be held: refusing it
/// up front keeps the error an OutOfMemory on hosts that overcommit, where the allocation would succeed and touching
/// its pages would end the process.
std::uint64_t host_memory_capacity() noexcept;

/// `count` zero-filled elements of `T` (numbers, complex numbers, bytes), 64-byte aligned. Move-only.
template <class T>
requires std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>
class HostArray {
 public:
  static constexpr std::size_t alignment = 64;

  HostArray() = default;
  /// OutOfMemory "<what>: cannot allocate <bytes> bytes of host memory" when the host cannot serve it.
  HostArray(std::size_t count, const char* what) {
    if (count == 0) return;
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
      throw OutOfMemory(
          fmt::format("{}: cannot allocate {} elements of {} bytes of host memory", what, count, sizeof(T)));
    const std::size_t bytes = count * sizeof(T);
    if (const std::uint64_t capacity = host_memory_capacity(); capacity != 0 && bytes > capacity)
      throw OutOfMemory(
          fmt::format("{}: cannot allocate {} bytes of host memory: more than this host's {} bytes of "
                      "memory and swap",
                      what, bytes, capacity));
    void* memory =
        fault::inject(fault::Site::host) ? nullptr : ::operator new (bytes, std::align_val_t{alignment}, std::nothrow);
    if (memory == nullptr) throw OutOfMemory(fmt::format("{}: cannot allocate {} bytes of host memory", what, bytes));
    std::memset(memory, 0, bytes);
    fault::allocated(fault::Site::host, bytes);
    data_ = static_cast<T*>(memory);
    size_ = count;
  }
  HostArray(HostArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  HostArray& operator=(HostArray&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  ~HostArray() { release(); }

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  void release() noexcept {
    if (data_ == nullptr) return;
    fault::released(fault::Site::host, size_ * sizeof(T));
    ::operator delete (static_cast<void*>(data_), std::align_val_t{alignment});
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cuplan::detail
