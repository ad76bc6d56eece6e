// SPDX-License-Identifier: Apache-2.0
#pragma once
// The staging engine (docs/staging.md): runs a host-operand call chunk by chunk. For chunk i the host packs its
// input into a pinned slot (host threads; pinned operands are DMA'd directly), the upload stream copies it to the
// device, the compute stream runs the operation and the download stream brings the result back, where the host
// unpacks it into the caller's memory. Slots rotate, so chunk i+1 uploads while chunk i computes and chunk i-1
// downloads. The internal streams start after the caller's stream and the caller's stream continues after them;
// run() returns when every result is on the host.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "base/non_copyable.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "plan/staging/chunking.hpp"
#include "plan/staging/pinned_ring.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail::staging {

/// One host side of one chunk.
struct HostPart {
  TensorView host;         ///< the chunk's host memory (pageable or pinned, any non-overlapping strides)
  Strides device_strides;  ///< element strides of the chunk in its device buffer (a dense layout)
  /// Input parts: byte offset of the part in the chunk's device input buffer (and in the pinned slot). Several
  /// inputs of one chunk (an operation's operands) lie side by side in one slot.
  std::size_t device_offset = 0;
};

/// What one chunk moves. A side without a device pointer uses the engine's slot buffer.
struct ChunkParts {
  std::optional<HostPart> in;     ///< uploaded before the compute step
  std::optional<HostPart> out;    ///< downloaded after it
  void* in_device = nullptr;      ///< upload here instead of the slot buffer (cuplan::copy into a device tensor)
  void* out_device = nullptr;     ///< download from here instead of the slot buffer
  std::vector<HostPart> more_in;  ///< further inputs of the chunk, each at its device_offset
  /// The upload overwrites memory that the compute steps of earlier chunks read (a block an operation keeps on
  /// the device across chunks, written through in_device): it waits for every compute step enqueued before it.
  bool after_computes = false;
};

struct PipelineRun {
  int device = 0;
  StreamRef caller;  ///< ordered before the internal streams and after them
  std::int64_t chunks = 0;
  int slots = 1;                   ///< buffer sets in flight (1 to max_slots)
  std::size_t in_slot_bytes = 0;   ///< device input buffer per slot (0: none)
  std::size_t in_host_bytes = 0;   ///< largest host input of a chunk, offsets included (pinned slot size)
  std::size_t out_host_bytes = 0;  ///< largest host output part of a chunk
  std::size_t out_slot_bytes = 0;  ///< device output buffer per slot (0: the compute step works in place)
  std::function<ChunkParts(std::int64_t)> parts;
  /// The operation on chunk i: reads `in`, writes `out` (the slot buffers) on `stream`. Empty: a plain transfer.
  std::function<void(std::int64_t, void* in, void* out, cudaStream_t stream)> compute;
};

/// The engine state one object keeps between calls: internal streams and events, pinned slots, device slots.
/// Not thread-safe (one call at a time, like the objects that own it).
class StagingPipeline : NonCopyable {
 public:
  StagingPipeline() = default;
  ~StagingPipeline();

  /// Runs every chunk and returns when the last result is in host memory. On an exception (the compute step's or
  /// a CUDA error) the internal streams are drained first, so no buffer is in use when it propagates; the object
  /// stays usable.
  void run(const PipelineRun& run);
  /// Frees pinned and device slots, streams and events (nothing is in flight between calls).
  void release() noexcept;
  /// Device bytes held by the slot buffers now.
  std::size_t device_bytes() const noexcept { return in_device_.size() + out_device_.size(); }
  /// Pinned host bytes held by the slots now.
  std::size_t host_bytes() const noexcept {
    return static_cast<std::size_t>(in_ring_.slots()) * in_ring_.slot_bytes() +
           static_cast<std::size_t>(out_ring_.slots()) * out_ring_.slot_bytes();
  }

 private:
  void ensure_streams(int device);
  void run_direct(const PipelineRun& run);
  void run_pipelined(const PipelineRun& run);
  void drain() noexcept;
  void release_streams() noexcept;

  PinnedRing in_ring_, out_ring_;
  DeviceBuffer in_device_, out_device_;
  int device_ = -1;
  cudaStream_t upload_ = nullptr, compute_ = nullptr, download_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t uploaded_[max_slots] = {}, computed_[max_slots] = {}, downloaded_[max_slots] = {};
  /// Per slot, one event per downloaded block: the unpack of a block starts as soon as its own DMA is done.
  cudaEvent_t block_downloaded_[max_slots][max_copy_blocks] = {};
};

}  // namespace cuplan::detail::staging
