// SPDX-License-Identifier: Apache-2.0
#pragma once
// Layout arithmetic of the distributed FFT (docs/distributed.md), as pure functions: how an extent is cut into
// blocks, each rank's box in each stage of a slab or pencil decomposition, which rank sends which sub-box to which,
// and the sequence of local transforms and exchanges. Nothing here touches a GPU or NCCL.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "distributed/exchange/box.hpp"

namespace cuplan::detail::dist {

enum class Kind { slab, pencil };

/// A resolved decomposition: slab has rows = ranks, cols = 1; pencil has rows * cols = ranks.
struct Layout {
  Kind kind = Kind::slab;
  int ndim = 3;
  int rows = 1;
  int cols = 1;
  int ranks() const noexcept { return rows * cols; }
  /// 2 for slab, 3 for pencil.
  int stages() const noexcept { return kind == Kind::slab ? 2 : 3; }
};

/// Requested decomposition (mirrors the public enum without depending on it).
enum class Request { automatic, slab, pencil };

/// Chooses or checks the decomposition for `shape` (the logical, real-space shape: 2 or 3 extents) on `ranks`
/// ranks, with the complex last extent `last_complex` (n/2+1 for R2C/C2R, else n). Throws InvalidArgument for a bad
/// request (pencil on 2D, a grid whose product is not the rank count) and for a shape whose split axes have fewer
/// elements than the ranks that split them (every rank owns a non-empty box in every stage).
/// Automatic: slab when axes 0 and 1 each have at least `ranks` elements (one exchange fewer), else the pencil grid
/// rows x cols (rows <= cols, as square as possible) that fits.
Layout resolve(Request request, std::optional<std::array<int, 2>> grid, const std::vector<std::int64_t>& shape,
               std::int64_t last_complex, int ranks);

/// Rank `rank`'s box in stage `stage` of an array of global `shape` (ndim entries used).
///  slab:   stage 0 splits axis 0 over all ranks; stage 1 splits axis 1.
///  pencil: rank = row * cols + col. Stage 0 splits axes (0, 1) by (rows, cols); stage 1 axes (0, 2); stage 2 axes
///          (1, 2).
Box stage_box(const Layout& layout, const std::array<std::int64_t, 3>& shape, int stage, int rank);

/// Axes whole (not split) in `stage`; a local FFT may run along them there.
std::vector<int> whole_axes(const Layout& layout, int stage);
/// Axes first whole in `stage` (stage 0: all its whole axes): the axes transformed there by the forward pipeline.
std::vector<int> new_axes(const Layout& layout, int stage);

/// What `rank` sends and receives when the array moves from stage `from` to stage `to`: to each peer, the part of
/// its own `from` box inside the peer's `to` box; from each peer, the part of the peer's `from` box inside its own
/// `to` box. Empty pieces are left out.
Exchange plan_exchange(const Layout& layout, const std::array<std::int64_t, 3>& shape, int from, int to, int rank);

/// The steps of a transform: local FFTs along whole axes of the current stage and exchanges between stages.
struct Step {
  enum class Op { fft, exchange } op = Op::fft;
  int stage = 0;           ///< fft: the stage it runs in; exchange: the stage it leaves
  int to = 0;              ///< exchange: the stage it reaches
  std::vector<int> axes;   ///< fft: the axes, in the order FFTOptions::axes takes them (halved axis last)
  bool real_side = false;  ///< fft: R2C input or C2R output (the halved last axis)
};
enum class Type { c2c, r2c, c2r };
/// Forward pipeline (C2C and R2C, natural input): stage 0 -> last stage, then back to stage 0 unless the result
/// stays transposed. Reverse pipeline (C2C with transposed input, C2R): from the last stage back to stage 0 (C2R
/// with natural input first moves to the last stage).
std::vector<Step> pipeline(const Layout& layout, Type type, bool transposed_input, bool transposed_result);

std::string describe(const Layout& layout);

}  // namespace cuplan::detail::dist
