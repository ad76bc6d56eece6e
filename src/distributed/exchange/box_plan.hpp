// SPDX-License-Identifier: Apache-2.0
#pragma once
// The planning half of the exchange layer, as pure functions: every rank holds one row-major local array made of
// boxes of a global array (one box for a slab or pencil, many for a 2D block-cyclic matrix); moving the array from
// one such set of local arrays to another is, for each pair of ranks, the pieces where a box one holds meets a box
// the other will hold. plan_boxes says which copies this rank makes, in which ring order, and where each piece sits
// in the packed per-peer buffers of a NCCL exchange. Sender and receiver enumerate a pair's pieces in the same
// order, so that both agree on the packed layout without telling each other. Nothing here touches a GPU.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "distributed/exchange/box.hpp"
#include "distributed/exchange/box_transfer.hpp"

namespace cuplan::detail::dist {

/// Where one box of the global array sits in a rank's local array: its first element is at `local_lo`.
struct Placement {
  Box global;
  std::array<std::int64_t, 3> local_lo{};
  friend bool operator==(const Placement&, const Placement&) = default;
};

/// One rank's local array: a row-major array of `shape` (the global array's ndim; unused axes 1) holding `parts`.
struct LocalArray {
  int ndim = 3;
  std::array<std::int64_t, 3> shape{1, 1, 1};
  std::vector<Placement> parts;
  std::int64_t numel() const noexcept { return shape[0] * shape[1] * shape[2]; }
  friend bool operator==(const LocalArray&, const LocalArray&) = default;
};

/// The local array that holds exactly `box` (an empty box gives an empty array).
LocalArray single_box(const Box& box);

/// The copies of one peer's share of an exchange. For a send segment: `direct` copies this rank's source array
/// into the peer's destination array (copy engines), `packed` copies it into the packed send buffer at
/// `offset + ...`. For a receive segment: `packed` copies the packed receive buffer into this rank's destination
/// array. Offsets and counts in elements.
struct PeerSegment {
  int peer = 0;
  std::int64_t offset = 0;  ///< where the peer's pieces start in the packed buffer
  std::int64_t count = 0;   ///< elements of all its pieces
  std::vector<BoxTransfer> direct;
  std::vector<BoxTransfer> packed;
};

/// What one rank does in an exchange from `from` (every rank's source array) to `to` (every rank's destination
/// array). `sends` in shifted-ring order (rank+1 first, the rank itself last), `recvs` likewise from rank-1 down;
/// peers with nothing to move are left out. Packed buffers hold the peers' segments in ascending rank order.
struct BoxPlan {
  int rank = 0;
  std::vector<PeerSegment> sends;
  std::vector<PeerSegment> recvs;
  std::int64_t send_total = 0;
  std::int64_t recv_total = 0;
  std::int64_t moved_to_peers() const noexcept;  ///< elements this rank sends to other ranks
};

/// The pieces rank `src` sends rank `dst`, in the order both sides pack them: for each part of from[src] in order,
/// for each part of to[dst] in order, their common box if not empty.
std::vector<Box> pair_pieces(const LocalArray& from, const LocalArray& to);

/// Rank `rank`'s share of the exchange `from` -> `to` (one local array per rank, the same on every rank).
BoxPlan plan_boxes(std::span<const LocalArray> from, std::span<const LocalArray> to, int rank);

/// Checks that the parts of `arrays` (one per rank) tile a global array of `shape` (ndim axes): every part inside
/// the shape and inside its local array, no two parts overlapping, every element held once. Returns the first
/// problem as text naming `what` and the ranks, or an empty string.
std::string tiling_problem(std::span<const LocalArray> arrays, const std::array<std::int64_t, 3>& shape, int ndim,
                           const char* what);

}  // namespace cuplan::detail::dist
