// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/box_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cuplan::detail::dist {

namespace {

// A box whose row-major layout is the local array's, placed so that `part` lands at its local position: then
// local_offset and box_transfer over it address the local array.
Box frame_of(const LocalArray& array, const Placement& part) {
  Box frame;
  frame.ndim = array.ndim;
  for (std::size_t d = 0; d < 3; ++d) {
    frame.lo[d] = part.global.lo[d] - part.local_lo[d];
    frame.n[d] = array.shape[d];
  }
  return frame;
}

struct PairPiece {
  Box box;
  std::size_t from_part = 0;
  std::size_t to_part = 0;
};

std::vector<PairPiece> pieces_between(const LocalArray& from, const LocalArray& to) {
  std::vector<PairPiece> out;
  for (std::size_t i = 0; i < from.parts.size(); ++i)
    for (std::size_t j = 0; j < to.parts.size(); ++j) {
      const Box common = intersect(from.parts[i].global, to.parts[j].global);
      if (!common.empty()) out.push_back({common, i, j});
    }
  return out;
}

std::string box_text(const Box& b) {
  std::string lo, n;
  for (int d = 0; d < b.ndim; ++d) {
    lo += fmt::format("{}{}", d ? ", " : "", b.lo[static_cast<std::size_t>(d)]);
    n += fmt::format("{}{}", d ? "x" : "", b.n[static_cast<std::size_t>(d)]);
  }
  return fmt::format("offset ({}) extent {}", lo, n);
}

bool boxes_overlap(const std::array<std::int64_t, 3>& alo, const std::array<std::int64_t, 3>& an,
                   const std::array<std::int64_t, 3>& blo, const std::array<std::int64_t, 3>& bn) {
  for (std::size_t d = 0; d < 3; ++d)
    if (an[d] == 0 || bn[d] == 0 || alo[d] + an[d] <= blo[d] || blo[d] + bn[d] <= alo[d]) return false;
  return true;
}

}  // namespace

LocalArray single_box(const Box& box) {
  LocalArray a;
  a.ndim = box.ndim;
  a.shape = box.n;
  if (!box.empty()) a.parts.push_back({box, {0, 0, 0}});
  return a;
}

std::int64_t BoxPlan::moved_to_peers() const noexcept {
  std::int64_t n = 0;
  for (const PeerSegment& s : sends)
    if (s.peer != rank) n += s.count;
  return n;
}

std::vector<Box> pair_pieces(const LocalArray& from, const LocalArray& to) {
  std::vector<Box> out;
  for (const PairPiece& p : pieces_between(from, to)) out.push_back(p.box);
  return out;
}

BoxPlan plan_boxes(std::span<const LocalArray> from, std::span<const LocalArray> to, int rank) {
  const int ranks = static_cast<int>(from.size());
  const auto r = static_cast<std::size_t>(rank);
  BoxPlan plan;
  plan.rank = rank;
  // Packed offsets in ascending peer order, then the issue order as a shifted ring.
  std::vector<PeerSegment> sends(static_cast<std::size_t>(ranks)), recvs(static_cast<std::size_t>(ranks));
  for (int peer = 0; peer < ranks; ++peer) {
    const auto q = static_cast<std::size_t>(peer);
    PeerSegment& s = sends[q];
    s.peer = peer;
    s.offset = plan.send_total;
    for (const PairPiece& p : pieces_between(from[r], to[q])) {
      const Box src_frame = frame_of(from[r], from[r].parts[p.from_part]);
      const Box dst_frame = frame_of(to[q], to[q].parts[p.to_part]);
      s.direct.push_back(box_transfer(peer, p.box, src_frame, dst_frame));
      BoxTransfer packed = box_transfer(peer, p.box, src_frame, p.box);
      packed.dst_offset += s.offset + s.count;
      s.packed.push_back(packed);
      s.count += p.box.numel();
    }
    plan.send_total += s.count;
    PeerSegment& v = recvs[q];
    v.peer = peer;
    v.offset = plan.recv_total;
    for (const PairPiece& p : pieces_between(from[q], to[r])) {
      const Box dst_frame = frame_of(to[r], to[r].parts[p.to_part]);
      BoxTransfer packed = box_transfer(peer, p.box, p.box, dst_frame);
      packed.src_offset += v.offset + v.count;
      v.packed.push_back(packed);
      v.count += p.box.numel();
    }
    plan.recv_total += v.count;
  }
  for (int step = 1; step <= ranks; ++step) {
    PeerSegment& s = sends[static_cast<std::size_t>((rank + step) % ranks)];
    if (s.count > 0) plan.sends.push_back(std::move(s));
    PeerSegment& v = recvs[static_cast<std::size_t>((rank - step + 2 * ranks) % ranks)];
    if (v.count > 0) plan.recvs.push_back(std::move(v));
  }
  // The rank's own segment comes last in both lists (step == ranks lands on the rank itself).
  return plan;
}

std::string tiling_problem(std::span<const LocalArray> arrays, const std::array<std::int64_t, 3>& shape, int ndim,
                           const char* what) {
  std::int64_t total = 1, held = 0;
  for (int d = 0; d < ndim; ++d) total *= shape[static_cast<std::size_t>(d)];
  struct Owned {
    int rank;
    const Placement* part;
  };
  std::vector<Owned> all;
  for (std::size_t r = 0; r < arrays.size(); ++r) {
    const LocalArray& a = arrays[r];
    for (const Placement& p : a.parts) {
      for (int d = 0; d < ndim; ++d) {
        const auto i = static_cast<std::size_t>(d);
        // As differences, so that no extreme offset overflows (shape and extent are not negative there).
        if (p.global.lo[i] < 0 || p.global.n[i] < 0 || shape[i] < 0 || p.global.lo[i] > shape[i] - p.global.n[i])
          return fmt::format("{}: rank {}'s box {} lies outside the global array (axis {} has {} elements)", what, r,
                             box_text(p.global), d, shape[i]);
        if (p.local_lo[i] < 0 || a.shape[i] < 0 || p.local_lo[i] > a.shape[i] - p.global.n[i])
          return fmt::format("{}: rank {}'s box {} does not fit its local array at local offset {}", what, r,
                             box_text(p.global), p.local_lo[i]);
      }
      held += p.global.numel();
      all.push_back({static_cast<int>(r), &p});
    }
  }
  // Sorted along axis 0, a part can only overlap the parts that start before it ends there.
  std::sort(all.begin(), all.end(),
            [](const Owned& x, const Owned& y) { return x.part->global.lo[0] < y.part->global.lo[0]; });
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j) {
      const Box& a = all[i].part->global;
      const Box& b = all[j].part->global;
      if (b.lo[0] >= a.lo[0] + a.n[0]) break;
      if (boxes_overlap(a.lo, a.n, b.lo, b.n))
        return fmt::format("{}: rank {}'s box {} overlaps rank {}'s box {}; every element must be held once", what,
                           all[i].rank, box_text(a), all[j].rank, box_text(b));
    }
  if (held != total)
    return fmt::format(
        "{}: the ranks' boxes hold {} of the global array's {} elements; every element must be held once", what, held,
        total);
  for (std::size_t r = 0; r < arrays.size(); ++r) {
    const auto& parts = arrays[r].parts;
    // Many parts come from the block-cyclic layout, whose placements are disjoint by construction.
    if (parts.size() > 64) continue;
    for (std::size_t i = 0; i < parts.size(); ++i)
      for (std::size_t j = i + 1; j < parts.size(); ++j)
        if (boxes_overlap(parts[i].local_lo, parts[i].global.n, parts[j].local_lo, parts[j].global.n))
          return fmt::format("{}: rank {} places boxes {} and {} over the same elements of its local array", what, r,
                             box_text(parts[i].global), box_text(parts[j].global));
  }
  return {};
}

}  // namespace cuplan::detail::dist
