// SPDX-License-Identifier: Apache-2.0
#pragma once
// The chunk plan of a host-operand Matmul under MatmulOptions::device_memory_limit (docs/staging.md, "Matmul"):
// which blocks of A, B, C, D and the bias are on the device at once and in which order they move. Pure: sizes in,
// a list of steps out, no CUDA and no memory access, so it is tested on any host.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "matmul/planner.hpp"
#include "plan/staging/chunk_grid.hpp"
#include "plan/staging/chunking.hpp"

namespace cuplan::detail::mm {

/// What the staged path needs to know about one product (element sizes in bytes).
struct StagingRequest {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;  ///< broadcast batch count
  bool b_batched = false;  ///< one B per batch entry (else one B for every entry)
  std::size_t a_element = 0, b_element = 0, d_element = 0;
  bool c = false;             ///< C is read tile by tile (D's bytes again, in D's layout)
  bool bias = false;          ///< one bias element per row of D
  std::size_t workspace = 0;  ///< device bytes reserved for the inner product's cuBLASLt workspace
  std::size_t limit = 0;      ///< resolved device memory limit (bytes, not 0)
  std::size_t target_bytes = staging::target_chunk_bytes;
  const char* who = "Matmul";
};

/// How the product is cut.
enum class StagingSchedule : std::uint8_t {
  batches,    ///< whole batch entries per tile; a shared B stays on the device
  rows,       ///< rows of A, C and D per tile within one batch entry; that entry's B (K x N) stays on the device
  b_columns,  ///< N split: a block of B's columns stays on the device while A's rows stream past it
  a_rows,     ///< N split: a block of A's rows (and its bias) stays on the device while B's columns stream past
};
const char* to_string(StagingSchedule schedule) noexcept;

/// One chunk of the staging pipeline.
struct StagingStep {
  enum class Kind : std::uint8_t {
    tile,           ///< uploads its streamed blocks and C, runs the product, downloads its block of D
    resident_b,     ///< uploads rows [row_begin, +rows) of B[:, col_begin : +cols] of entry batch_begin
    resident_a,     ///< uploads rows [row_begin, +rows) of A of entry batch_begin
    resident_bias,  ///< uploads bias rows [row_begin, +rows) of entry batch_begin
  };
  Kind kind = Kind::tile;
  std::int64_t batch_begin = 0, batches = 1;
  std::int64_t row_begin = 0, rows = 0;  ///< tile: rows of A, C, D and bias; resident_b: rows of B (along K)
  std::int64_t col_begin = 0, cols = 0;  ///< tile: columns of B, C and D; resident_b: columns of B
  std::int64_t block_row = 0;            ///< resident_a / resident_b: the piece's first row within the resident block
  /// The step's block of the (batch entry, row, column) space, the staging engine's description of a chunk's place:
  /// an operand's part starts at block().offset(its strides along those three axes, 0 along one it does not walk).
  staging::ChunkBlock block() const { return {Shape{batch_begin, row_begin, col_begin}, Shape{batches, rows, cols}}; }
};

struct StagingPlan {
  StagingSchedule schedule = StagingSchedule::rows;
  std::int64_t batch_chunk = 1, row_chunk = 0, col_chunk = 0;  ///< the largest tile
  int slots = 1;
  std::size_t in_slot_bytes = 0;   ///< per slot: the tile's streamed blocks, C and bias (256-byte aligned parts)
  std::size_t out_slot_bytes = 0;  ///< per slot: the tile's block of D
  std::size_t resident_bytes = 0;  ///< the block that stays on the device (B, B's columns, or A's rows and bias)
  std::size_t device_bytes = 0;    ///< most device bytes held: resident, slots and the workspace reserve
  std::size_t moved_bytes = 0;     ///< bytes crossing PCIe in both directions together
  std::size_t piece_bytes = 0;     ///< largest host block of one step (the pinned slot size)
  std::int64_t tiles = 0;
  /// Byte offsets within an input slot: the first streamed block (A, or B's columns under a_rows) starts at 0.
  std::size_t slot_b = 0, slot_c = 0, slot_bias = 0;
  bool b_in_slot = false;         ///< batches: each tile's entries of B travel in its slot (B is batched)
  std::size_t resident_bias = 0;  ///< a_rows: offset of the bias rows within the resident block
  std::vector<StagingStep> steps;
};

/// Bytes of one part of a slot, rounded up so that every part starts 256-byte aligned.
inline std::size_t slot_part(std::size_t bytes) noexcept {
  return (bytes + 255) / 256 * 256;
}

/// The smallest limit any schedule runs under: the workspace reserve, the alignment padding, one row of A, one
/// column of B and one element of D (and of C, and one bias element).
std::size_t staging_minimum_limit(const StagingRequest& request) noexcept;

/// The plan within request.limit that moves the fewest bytes among the schedules tried (docs/staging.md);
/// InvalidArgument naming staging_minimum_limit when the limit is below it.
StagingPlan plan_staging(const StagingRequest& request);

/// Why a host-operand product cannot be split (nullptr when it can): epilogs that write an aux buffer in the
/// backend's own layout or reduce over M or K, fp8 scaling, conjugation, batch strides that no one stride per
/// operand describes. `batch_collapsible`: every operand's batch axes walk with one stride.
const char* unsplittable_reason(const Problem& problem, bool batch_collapsible) noexcept;

/// The one stride that walks the flattened batch axes of `strides` (full shape batch + matrix axes), or -1 when
/// the batch axes do not nest (extent-1 axes ignored; all-zero strides give 0).
std::int64_t flat_batch_stride(const Shape& batch_shape, const Strides& strides) noexcept;

}  // namespace cuplan::detail::mm
