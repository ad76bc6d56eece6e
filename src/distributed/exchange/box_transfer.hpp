// SPDX-License-Identifier: Apache-2.0
#pragma once
// Geometry of the exchanges, as pure functions: a piece of an exchange as one strided copy between two row-major
// local arrays (collapsed to the fewest axes, so that a slab's piece is one 2D copy with long rows), the pieces of
// one chunk of the source, and whether a packed exchange buffer would only repeat a local array's layout (the copy
// into or out of it does nothing and is skipped). Nothing here touches a GPU.

#include <array>
#include <cstdint>
#include <vector>

#include "distributed/exchange/box.hpp"

namespace cuplan::detail::dist {

/// One strided copy of a sub-box between two row-major local arrays, in elements, outermost axis first. Axis 2 is
/// contiguous on both sides. Axes whose elements follow each other on both sides are merged, and axes of extent 1
/// dropped, outer ones first, so that dims() is as small as the layouts allow.
struct BoxTransfer {
  int peer = 0;
  std::int64_t src_offset = 0;  ///< element offset of the first element in the source array
  std::int64_t dst_offset = 0;  ///< element offset of the first element in the destination array
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<std::int64_t, 2> src_stride{0, 0};  ///< element strides of axes 0 and 1 in the source
  std::array<std::int64_t, 2> dst_stride{0, 0};  ///< element strides of axes 0 and 1 in the destination
  std::int64_t src_rows = 1;  ///< rows per plane of the source array (3D copies: plane stride / row stride)
  std::int64_t dst_rows = 1;  ///< rows per plane of the destination array

  std::int64_t numel() const noexcept { return n[0] * n[1] * n[2]; }
  /// Number of axes left after collapsing: 1 (one contiguous run), 2 (rows) or 3.
  int dims() const noexcept { return n[0] > 1 ? 3 : n[1] > 1 ? 2 : 1; }
  friend bool operator==(const BoxTransfer&, const BoxTransfer&) = default;
};

/// The copy of `piece` (global coordinates) from the local array over `src_owner` to the local array over
/// `dst_owner`; both owners contain the piece.
BoxTransfer box_transfer(int peer, const Box& piece, const Box& src_owner, const Box& dst_owner);

/// Whether `piece` is one contiguous run inside the local array over `owner`.
bool contiguous_in(const Box& piece, const Box& owner);

/// True when the packed buffer of `pieces` (each row-major at its offset) has the layout of the local array over
/// `owner`: every piece is contiguous there at its packed offset, and the pieces cover the owner.
bool packed_is_local_layout(const std::vector<Piece>& pieces, const Box& owner);

/// `count` consecutive blocks of `owner` along `axis` (the split rule of `split`): chunk `index`'s box.
Box chunk_box(const Box& owner, int axis, int count, int index);

/// The transfers of the part of the send pieces of `exchange` that lies in `chunk` (a sub-box of `src_owner`),
/// each into the peer's local array over `dst_owners[peer]`, in the order of a shifted ring starting after `rank`
/// (peer rank+1 first, the rank's own piece last), empty parts left out.
std::vector<BoxTransfer> chunk_transfers(const Exchange& exchange, const Box& chunk, const Box& src_owner,
                                         const std::vector<Box>& dst_owners, int rank);

}  // namespace cuplan::detail::dist
