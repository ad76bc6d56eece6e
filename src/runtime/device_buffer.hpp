// SPDX-License-Identifier: Apache-2.0
#pragma once
// Stream-ordered device memory owned by a stateful object (workspace, staging, internal copies).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "cuplan/stream.hpp"
#include "runtime/recorded_stream.hpp"

namespace cuplan::detail {

class Storage;

/// Stream-ordered device memory owned by an object (workspace, staging, internal copies). Built on Storage, so a
/// buffer used on several streams is never reused by the pool before all of them are done with it.
class DeviceBuffer {
 public:
  /// At least `bytes` on `device`, usable on `stream`: reuses the current block when big enough (recording the
  /// stream use), else releases it and allocates on `stream`. Returns the data pointer (null for 0 bytes).
  void* ensure(std::size_t bytes, int device, StreamRef stream);
  /// Release now (stream-ordered after every recorded use).
  void release() noexcept;
  void* data() const noexcept;
  std::size_t size() const noexcept;
  bool empty() const noexcept { return storage_ == nullptr; }

 private:
  std::shared_ptr<Storage> storage_;
  RecordedStream recorded_;  // already recorded on storage_: the common repeat costs no lock
};

}  // namespace cuplan::detail
