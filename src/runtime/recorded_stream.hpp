// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which stream uses of an object's memory were last recorded on, so that a repeat on that stream records nothing.

#include <cuda_runtime_api.h>

#include "cuplan/stream.hpp"

namespace cuplan::detail {

/// A stream whose handle cannot be destroyed and reused while the uses recorded on it keep it: a cuplan-made stream
/// (kept alive by what recorded it) or a default-stream handle. A raw handle made elsewhere is not: record it again.
bool lasting_stream(StreamRef stream) noexcept;

/// The stream on which an object last recorded its uses of some memory (its operands, its buffer), so that the next
/// call on the same stream records nothing and takes no storage lock. Only a lasting stream is remembered; any other
/// handle is recorded at every use. FFT, Matmul and DeviceBuffer each keep one.
class RecordedStream {
 public:
  /// True when the uses on `stream` are already recorded.
  bool covers(StreamRef stream) const noexcept { return known_ && stream_ == stream.native(); }
  /// The uses have just been recorded on `stream`.
  void remember(StreamRef stream) noexcept {
    known_ = lasting_stream(stream);
    stream_ = stream.native();
  }
  /// The memory changed (another operand, another block): record at the next use.
  void forget() noexcept { known_ = false; }

 private:
  cudaStream_t stream_ = nullptr;
  bool known_ = false;
};

}  // namespace cuplan::detail
