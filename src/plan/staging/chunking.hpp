// SPDX-License-Identifier: Apache-2.0
#pragma once
// Chunk arithmetic of the staging engine (docs/staging.md): how many chunks of how many units a host operand is
// split into so that the device memory of one call stays within a limit. Pure: no CUDA, no allocation.

#include <cstddef>
#include <cstdint>

namespace cuplan::detail::staging {

/// Operands up to this many bytes (all host sides of one call together) take the single-chunk direct path on the
/// caller's stream: splitting them would only add event and launch overhead.
inline constexpr std::size_t direct_path_bytes = std::size_t{8} << 20;
/// Preferred device bytes of one chunk (all its buffers): large enough that a DMA runs near PCIe peak, small enough
/// that upload, compute and download of neighbouring chunks overlap for most of the call (the first chunk's upload
/// and the last one's download are not overlapped). Measured on a 512 MiB FFT round trip (docs/staging.md), 20 to
/// 24 MiB did best.
inline constexpr std::size_t target_chunk_bytes = std::size_t{24} << 20;
/// Device slots (buffer sets) in flight: chunk i+1 uploads while chunk i computes and chunk i-1 downloads.
inline constexpr int max_slots = 3;
/// Within a chunk, the host copies and the DMAs are pipelined in blocks of about this many bytes (at most
/// max_copy_blocks per part): a block uploads as soon as it is packed, and unpacks as soon as it is downloaded, so
/// that only one block's copy, not the whole chunk's, is exposed at the start and the end of a call.
inline constexpr std::size_t copy_block_bytes = std::size_t{4} << 20;
inline constexpr int max_copy_blocks = 8;

/// What one call needs on the device, per unit of the split axis and independent of it.
struct ChunkRequest {
  std::int64_t units = 0;       ///< extent of the split axis (the operation's independent axis), >= 0
  std::size_t unit_bytes = 0;   ///< device bytes one unit needs in one slot (input and output buffers), > 0
  std::size_t fixed_bytes = 0;  ///< device bytes held regardless of the chunk size (library workspace)
  std::size_t limit = 0;        ///< the resolved device memory limit in bytes (not 0)
  std::size_t target_bytes = target_chunk_bytes;  ///< preferred bytes of one slot
  const char* who = "staging";                    ///< names the caller in messages ("FFT", "Matmul")
};

/// One range of a split axis: `size` units from `begin`.
struct ChunkRange {
  std::int64_t begin = 0;
  std::int64_t size = 0;
};

/// The split: `count` chunks, each of `chunk` units but the last, which holds `last` (chunk when it divides).
/// `slots` buffer sets are in flight; slots * chunk * unit_bytes + fixed_bytes <= limit.
struct ChunkPlan {
  std::int64_t units = 0;
  std::int64_t chunk = 0;
  std::int64_t count = 0;
  std::int64_t last = 0;
  int slots = 1;
  std::int64_t begin(std::int64_t i) const noexcept { return i * chunk; }
  std::int64_t size(std::int64_t i) const noexcept { return i + 1 == count ? last : chunk; }
  ChunkRange range(std::int64_t i) const noexcept { return {begin(i), size(i)}; }
  /// Device bytes the plan holds at most (slots in flight, fixed bytes included).
  std::size_t device_bytes(const ChunkRequest& request) const noexcept;
};

/// The smallest limit that runs the request at all: one unit in one slot plus the fixed bytes.
std::size_t minimum_limit(const ChunkRequest& request) noexcept;

/// Chunks as large as the target allows within the limit, balanced so that the last one is not a sliver.
/// InvalidArgument (naming `who`, the limit and minimum_limit) when the limit cannot hold one unit; InvalidArgument
/// for units < 0 or unit_bytes == 0. Zero units give zero chunks.
ChunkPlan plan_chunks(const ChunkRequest& request);

/// The default device memory limit (device_memory_limit = 0): half the device memory free when asked, so that a
/// staged call leaves room for the caller's own allocations and for the library's workspaces.
std::size_t default_limit(std::size_t free_bytes) noexcept;

}  // namespace cuplan::detail::staging
