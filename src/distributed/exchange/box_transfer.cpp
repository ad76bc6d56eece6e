// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/box_transfer.hpp"

#include <algorithm>
#include <stdexcept>

namespace cuplan::detail::dist {

BoxTransfer box_transfer(int peer, const Box& piece, const Box& src_owner, const Box& dst_owner) {
  if (!(intersect(piece, src_owner) == piece) || !(intersect(piece, dst_owner) == piece))
    throw std::logic_error("box_transfer: the piece lies outside an owner");
  BoxTransfer t;
  t.peer = peer;
  t.src_offset = local_offset(src_owner, piece.lo);
  t.dst_offset = local_offset(dst_owner, piece.lo);
  t.src_rows = src_owner.n[1];
  t.dst_rows = dst_owner.n[1];
  // Axes as (extent, source stride, destination stride), innermost last; merged from the inside out.
  struct Axis {
    std::int64_t n, src, dst;
  };
  std::vector<Axis> axes{{piece.n[2], 1, 1}};
  const std::int64_t src_strides[2] = {src_owner.n[1] * src_owner.n[2], src_owner.n[2]};
  const std::int64_t dst_strides[2] = {dst_owner.n[1] * dst_owner.n[2], dst_owner.n[2]};
  for (int a = 1; a >= 0; --a) {
    const Axis outer{piece.n[static_cast<std::size_t>(a)], src_strides[a], dst_strides[a]};
    if (outer.n == 1) continue;
    Axis& inner = axes.back();
    if (outer.src == inner.n * inner.src && outer.dst == inner.n * inner.dst) {
      inner.n *= outer.n;  // contiguous on both sides: one longer axis
    } else {
      axes.push_back(outer);
    }
  }
  t.n[2] = axes[0].n;
  if (axes.size() > 1) {
    t.n[1] = axes[1].n;
    t.src_stride[1] = axes[1].src;
    t.dst_stride[1] = axes[1].dst;
  } else {
    t.src_stride[1] = t.dst_stride[1] = t.n[2];
  }
  if (axes.size() > 2) {
    t.n[0] = axes[2].n;
    t.src_stride[0] = axes[2].src;
    t.dst_stride[0] = axes[2].dst;
  } else {
    t.src_stride[0] = t.src_stride[1] * t.n[1];
    t.dst_stride[0] = t.dst_stride[1] * t.n[1];
  }
  return t;
}

bool contiguous_in(const Box& piece, const Box& owner) {
  const BoxTransfer t = box_transfer(0, piece, owner, piece);
  // Copying into a packed copy of itself: one run when the piece is contiguous in the owner.
  return piece.numel() == 0 || t.dims() == 1;
}

bool packed_is_local_layout(const std::vector<Piece>& pieces, const Box& owner) {
  std::int64_t covered = 0;
  for (const Piece& p : pieces) {
    if (p.box.numel() == 0) continue;
    if (!contiguous_in(p.box, owner) || local_offset(owner, p.box.lo) != p.offset) return false;
    covered += p.box.numel();
  }
  return covered == owner.numel();
}

Box chunk_box(const Box& owner, int axis, int count, int index) {
  const auto a = static_cast<std::size_t>(axis);
  const Block b = split(owner.n[a], count, index);
  Box c = owner;
  c.lo[a] = owner.lo[a] + b.offset;
  c.n[a] = b.size;
  return c;
}

std::vector<BoxTransfer> chunk_transfers(const Exchange& exchange, const Box& chunk, const Box& src_owner,
                                         const std::vector<Box>& dst_owners, int rank) {
  const int ranks = static_cast<int>(dst_owners.size());
  std::vector<BoxTransfer> out;
  for (int step = 1; step <= ranks; ++step) {
    const int peer = (rank + step) % ranks;
    for (const Piece& p : exchange.sends) {
      if (p.peer != peer) continue;
      const Box part = intersect(p.box, chunk);
      if (part.numel() == 0) continue;
      out.push_back(box_transfer(peer, part, src_owner, dst_owners[static_cast<std::size_t>(peer)]));
    }
  }
  return out;
}

}  // namespace cuplan::detail::dist
