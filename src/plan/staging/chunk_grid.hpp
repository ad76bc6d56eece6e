// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which elements belong to chunk c of a staged call (docs/staging.md): the one description of a chunk's place in
// its operand, shared by the FFT and Matmul staging paths and cuplan::copy. A pure value: built once from the
// split (chunking.hpp), asked per chunk, no CUDA, no allocation.

#include <cstdint>
#include <span>

#include "cuplan/tensor.hpp"
#include "plan/staging/chunking.hpp"

namespace cuplan::detail::staging {

/// The block of an index space that one chunk covers: along every axis, its first index and its extent.
struct ChunkBlock {
  Shape begin;
  Shape extent;
  /// The element offset of the block's first element in an operand of these strides (one per axis; a stride of 0
  /// for an axis the operand does not walk, such as the columns of A in a Matmul tile).
  std::int64_t offset(const Strides& strides) const noexcept;
};

/// Chunks of an index space: each chunk fixes one index of every outer axis (walked row-major, the first outer axis
/// outermost), covers one range of the split along the split axis, and the whole of every other axis. Chunk c is
/// range c % split().count at outer position c / split().count.
class ChunkGrid {
 public:
  /// No chunks.
  ChunkGrid() = default;
  /// The grid of `shape` (every extent > 0). `split` cuts `split_axis` (its `units` equal to that extent); with
  /// `split_axis` -1 no axis is cut and `split` is one chunk of one unit. InvalidArgument naming `who` for an empty
  /// or zero-size shape, an axis out of range or named twice, or a split that does not cover the split axis.
  ChunkGrid(const Shape& shape, std::span<const int> outer_axes, int split_axis, const ChunkPlan& split,
            const char* who);

  std::int64_t count() const noexcept { return outer_count_ * split_.count; }
  std::int64_t outer_count() const noexcept { return outer_count_; }
  int split_axis() const noexcept { return split_axis_; }
  const ChunkPlan& split() const noexcept { return split_; }
  /// Chunk c's range of the split axis (0 <= c < count(); not checked).
  ChunkRange range(std::int64_t c) const noexcept { return split_.range(c % split_.count); }
  /// Chunk c's block (0 <= c < count(); not checked).
  ChunkBlock block(std::int64_t c) const noexcept;
  /// The element offset of chunk c's first element in an operand of these strides; the same as
  /// block(c).offset(strides) without building the block.
  std::int64_t offset(std::int64_t c, const Strides& strides) const noexcept;

 private:
  Shape shape_;
  Dims outer_axes_;  // axis numbers, outermost first
  int split_axis_ = -1;
  ChunkPlan split_;
  std::int64_t outer_count_ = 0;
};

/// `units` cut into chunks of exactly `chunk` units but the last (no balancing: the caller sized its slots for
/// `chunk`), as many slots as chunks up to max_slots. Zero units give zero chunks. InvalidArgument naming `who`
/// for units < 0 or chunk < 1.
ChunkPlan fixed_chunks(std::int64_t units, std::int64_t chunk, const char* who);

}  // namespace cuplan::detail::staging
