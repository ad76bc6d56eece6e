// SPDX-License-Identifier: Apache-2.0
// Devices: the one place that asks the CUDA runtime whether a GPU exists, and the current-device helpers.

#include "cuplan/device.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "base/cuda_check.hpp"
#include "cuplan/errors.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

// Asked once: the answer cannot change during the life of the process, and without a driver every query costs a
// failed driver load. A function-local static (initialised once, thread-safe): every later call is one load of its
// guard, where std::call_once would set two thread-locals and call pthread_once each time; an execute asks several
// times (the result's allocation, the device checks).
int query_device_count() noexcept {
  static const int count = [] {
    int n = 0;
    const cudaError_t status = cudaGetDeviceCount(&n);
    // Any failure (no driver, no device, driver too old) means "no GPU"; clear it so that it is not reported by an
    // unrelated later call.
    (void)cudaGetLastError();
    return status == cudaSuccess ? n : 0;
  }();
  return count;
}

}  // namespace

bool cuda_available() noexcept {
  return query_device_count() > 0;
}

int cuda_device_count() noexcept {
  return query_device_count();
}

Device Device::current() {
  detail::require_cuda("Device::current");
  int index = 0;
  CUPLAN_CUDA_CHECK(cudaGetDevice(&index));
  return Device::cuda(index);
}

void Device::check_valid(const char* what) const {
  if (is_cpu()) return;
  detail::require_device_index_sign(*this, what);
  detail::require_cuda(what);
  const int count = cuda_device_count();
  if (index_ >= count) [[unlikely]] {
    throw InvalidArgument(fmt::format("{}: expected a CUDA device index in [0, {}), got {}", what, count, index_));
  }
}

void Device::use() const {
  if (is_cpu()) return;
  check_valid("Device::use");
  CUPLAN_CUDA_CHECK(cudaSetDevice(index_));
}

void Device::synchronize() const {
  if (is_cpu()) return;
  DeviceScope scope(*this);
  CUPLAN_CUDA_CHECK(cudaDeviceSynchronize());
}

std::string Device::to_string() const {
  return is_cpu() ? std::string("cpu") : fmt::format("cuda:{}", index_);
}

DeviceScope::DeviceScope(Device device) {
  if (device.is_cpu()) return;
  device.check_valid("DeviceScope");
  if (cuda_device_count() == 1) return;  // the only device is always current: no runtime call on the hot path
  int current = 0;
  CUPLAN_CUDA_CHECK(cudaGetDevice(&current));
  if (current == device.index()) return;  // nothing to change, nothing to restore
  CUPLAN_CUDA_CHECK(cudaSetDevice(device.index()));
  previous_ = current;
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous_));
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
