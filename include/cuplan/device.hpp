// SPDX-License-Identifier: Apache-2.0
#pragma once
// Devices and memory spaces (docs/streams.md).

#include <cstdint>
#include <string>

#include "cuplan/export.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// True when the CUDA runtime finds at least one usable device. False (never an exception) on a machine with
/// no driver or no GPU, where cuplan runs everything on the CPU.
CUPLAN_API bool cuda_available() noexcept;
/// Number of CUDA devices; 0 where cuda_available() is false.
CUPLAN_API int cuda_device_count() noexcept;

/// Where memory lives, as found from a pointer (cudaPointerGetAttributes) or stated by the user.
enum class MemorySpace : std::uint8_t { host_pageable, host_pinned, device, managed };

/// A place that runs work or holds memory: the CPU, or CUDA device i.
class CUPLAN_API Device {
 public:
  /// What a Device is: the CPU or a CUDA device.
  enum class Kind : std::uint8_t { cpu, cuda };

  /// The CPU.
  constexpr Device() = default;
  /// The CPU (same as Device()).
  static constexpr Device cpu() { return Device(); }
  /// CUDA device `index`; checked against the device count when used (InvalidArgument if out of range).
  static constexpr Device cuda(int index = 0) { return Device(Kind::cuda, index); }
  /// The calling thread's current CUDA device (NotSupported "no CUDA device: ..." without a GPU).
  static Device current();

  /// The CPU or a CUDA device.
  constexpr Kind kind() const { return kind_; }
  /// True for the CPU.
  constexpr bool is_cpu() const { return kind_ == Kind::cpu; }
  /// True for a CUDA device.
  constexpr bool is_cuda() const { return kind_ == Kind::cuda; }
  /// Device index; -1 for the CPU.
  constexpr int index() const { return kind_ == Kind::cuda ? index_ : -1; }

  /// Make this the calling thread's current device (cudaSetDevice). No-op for the CPU.
  void use() const;
  /// Wait for all work on this device (cudaDeviceSynchronize). No-op for the CPU.
  void synchronize() const;
  /// Throws InvalidArgument naming `what` if this is a CUDA device outside [0, cuda_device_count()), or
  /// NotSupported ("no CUDA device: ...") if there is no GPU at all.
  void check_valid(const char* what = "device") const;

  /// "cpu" or "cuda:<index>".
  std::string to_string() const;
  /// Same kind and index.
  friend constexpr bool operator==(Device a, Device b) { return a.kind_ == b.kind_ && a.index() == b.index(); }

 private:
  constexpr Device(Kind kind, int index) : kind_(kind), index_(index) {}
  Kind kind_ = Kind::cpu;
  int index_ = -1;
};

/// Makes `device` current for the calling thread until the scope ends (restored even on exception).
class CUPLAN_API DeviceScope {
 public:
  /// Makes `device` current (no-op for the CPU).
  explicit DeviceScope(Device device);
  /// Restores the device that was current before.
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
