// SPDX-License-Identifier: Apache-2.0
// DeviceBuffer (see device_buffer.hpp).

#include "runtime/device_buffer.hpp"

#include "runtime/storage.hpp"

namespace cuplan::detail {

void* DeviceBuffer::ensure(std::size_t bytes, int device, StreamRef stream) {
  if (bytes == 0) return storage_ ? storage_->data() : nullptr;
  if (storage_ && storage_->bytes() >= bytes) {
    // A stream once recorded stays recorded (and a cuplan-made one alive), so repeats skip the lock. A raw handle
    // could be destroyed and its value reused by a new stream: those are recorded every time.
    if (!recorded_.covers(stream)) {
      storage_->record_use(stream);
      recorded_.remember(stream);
    }
    return storage_->data();
  }
  storage_.reset();  // stream-ordered release after every recorded use
  storage_ = Storage::allocate(bytes, Device::cuda(device), MemorySpace::device, stream);
  recorded_.remember(stream);
  return storage_->data();
}

void DeviceBuffer::release() noexcept {
  storage_.reset();
  recorded_.forget();
}

void* DeviceBuffer::data() const noexcept {
  return storage_ ? storage_->data() : nullptr;
}

std::size_t DeviceBuffer::size() const noexcept {
  return storage_ ? storage_->bytes() : 0;
}

}  // namespace cuplan::detail
