// SPDX-License-Identifier: Apache-2.0
#pragma once
// Boxes of a distributed array of up to three dimensions and the pieces of an exchange between ranks, as pure
// values: the vocabulary of the exchange layer, shared by every distributed operation. Nothing here touches a GPU.

#include <array>
#include <cstdint>
#include <vector>

namespace cuplan::detail::dist {

/// A box of a global array of 2 or 3 dimensions: offsets and extents per axis (unused axes: offset 0, extent 1).
struct Box {
  int ndim = 3;
  std::array<std::int64_t, 3> lo{};
  std::array<std::int64_t, 3> n{1, 1, 1};

  std::int64_t numel() const noexcept;
  bool empty() const noexcept;
  bool contains(const std::array<std::int64_t, 3>& index) const noexcept;
  friend bool operator==(const Box&, const Box&) = default;
};

/// The common part of two boxes (empty extents when they do not overlap).
Box intersect(const Box& a, const Box& b) noexcept;

/// Block `index` of `parts` blocks of `extent`: the first extent % parts blocks have ceil(extent / parts)
/// elements, the others floor(extent / parts); blocks are consecutive from offset 0.
struct Block {
  std::int64_t offset = 0;
  std::int64_t size = 0;
};
Block split(std::int64_t extent, int parts, int index);

/// One contiguous piece of an exchange: the sub-box (global coordinates) and its element offset in the packed
/// buffer. Pieces are packed in row-major order of their box, peers in ascending rank order.
struct Piece {
  int peer = 0;
  Box box;
  std::int64_t offset = 0;
};
struct Exchange {
  std::vector<Piece> sends;
  std::vector<Piece> recvs;
  std::int64_t send_total = 0;
  std::int64_t recv_total = 0;
};
/// Element offset (row-major) of global index `index` inside a local array that holds box `owner`.
std::int64_t local_offset(const Box& owner, const std::array<std::int64_t, 3>& index) noexcept;

}  // namespace cuplan::detail::dist
