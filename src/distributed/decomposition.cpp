// SPDX-License-Identifier: Apache-2.0
#include "distributed/decomposition.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail::dist {

namespace {

using Shape3 = std::array<std::int64_t, 3>;

// Every rank must own a non-empty box in every stage: each split axis needs at least as many elements as parts.
// Returns the first violation as text, or an empty string.
std::string fit_problem(const Layout& layout, const Shape3& complex_shape) {
  for (int stage = 0; stage < layout.stages(); ++stage) {
    for (int rank = 0; rank < layout.ranks(); ++rank) {
      const Box box = stage_box(layout, complex_shape, stage, rank);
      for (int d = 0; d < layout.ndim; ++d) {
        if (box.n[static_cast<std::size_t>(d)] == 0)
          return fmt::format("axis {} (extent {}) is split into more blocks than it has elements in stage {}", d,
                             complex_shape[static_cast<std::size_t>(d)], stage);
      }
    }
  }
  return {};
}

}  // namespace

Layout resolve(Request request, std::optional<std::array<int, 2>> grid, const std::vector<std::int64_t>& shape,
               std::int64_t last_complex, int ranks) {
  const int ndim = static_cast<int>(shape.size());
  if (ndim != 2 && ndim != 3)
    throw InvalidArgument(fmt::format("global_shape: expected 2 or 3 dimensions, got {}", ndim));
  for (int d = 0; d < ndim; ++d)
    if (shape[static_cast<std::size_t>(d)] < 1)
      throw InvalidArgument(fmt::format("global_shape: extent of axis {} must be positive, got {}", d,
                                        shape[static_cast<std::size_t>(d)]));
  if (ranks < 1) throw InvalidArgument(fmt::format("communicator: expected at least 1 rank, got {}", ranks));
  Shape3 complex_shape{1, 1, 1};
  for (int d = 0; d < ndim; ++d) complex_shape[static_cast<std::size_t>(d)] = shape[static_cast<std::size_t>(d)];
  complex_shape[static_cast<std::size_t>(ndim - 1)] = last_complex;

  if (grid && ((*grid)[0] < 1 || (*grid)[1] < 1))
    throw InvalidArgument(fmt::format("process_grid: extents must be positive, got {} x {}", (*grid)[0], (*grid)[1]));
  if (grid && std::int64_t{(*grid)[0]} * (*grid)[1] != ranks)
    throw InvalidArgument(fmt::format("process_grid: {} x {} = {} ranks, but the communicator has {}", (*grid)[0],
                                      (*grid)[1], std::int64_t{(*grid)[0]} * (*grid)[1], ranks));

  const Layout slab{Kind::slab, ndim, ranks, 1};
  auto checked = [&](const Layout& layout) {
    const std::string problem = fit_problem(layout, complex_shape);
    if (!problem.empty())
      throw InvalidArgument(fmt::format("global_shape {} does not fit {} on {} ranks: {}", fmt::join(shape, "x"),
                                        describe(layout), ranks, problem));
    return layout;
  };
  if (request == Request::slab) {
    if (grid && (*grid)[1] != 1)
      throw InvalidArgument(
          fmt::format("process_grid: a slab decomposition takes {} x 1, got {} x {}", ranks, (*grid)[0], (*grid)[1]));
    return checked(slab);
  }
  if (request == Request::pencil) {
    if (ndim != 3) throw InvalidArgument(fmt::format("decomposition: pencil needs a 3D global_shape, got {}D", ndim));
  }
  if (grid) {
    if (ndim != 3)
      throw InvalidArgument(fmt::format("process_grid: a 2D global_shape takes a slab ({} x 1), got {} x {}", ranks,
                                        (*grid)[0], (*grid)[1]));
    return checked(Layout{Kind::pencil, 3, (*grid)[0], (*grid)[1]});
  }
  if (request == Request::automatic && fit_problem(slab, complex_shape).empty()) return slab;
  if (ndim == 2) return checked(slab);  // throws: a 2D slab was the only choice
  // Divisor pairs rows x cols, most square first, rows <= cols before its mirror.
  std::vector<std::array<int, 2>> candidates;
  for (int rows = 1; rows <= ranks; ++rows)
    if (ranks % rows == 0) candidates.push_back({rows, ranks / rows});
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    const int da = std::abs(a[0] - a[1]);
    const int db = std::abs(b[0] - b[1]);
    return da != db ? da < db : a[0] < b[0];
  });
  for (const auto& c : candidates) {
    const Layout pencil{Kind::pencil, 3, c[0], c[1]};
    if (fit_problem(pencil, complex_shape).empty()) return pencil;
  }
  const Layout square{Kind::pencil, 3, candidates.front()[0], candidates.front()[1]};
  return checked(square);  // throws with the reason of the most square grid
}

Box stage_box(const Layout& layout, const Shape3& shape, int stage, int rank) {
  if (rank < 0 || rank >= layout.ranks())
    throw InvalidArgument(fmt::format("rank: expected 0..{}, got {}", layout.ranks() - 1, rank));
  if (stage < 0 || stage >= layout.stages())
    throw InvalidArgument(fmt::format("stage: expected 0..{}, got {}", layout.stages() - 1, stage));
  Box box;
  box.ndim = layout.ndim;
  box.n = shape;
  for (int d = layout.ndim; d < 3; ++d) box.n[static_cast<std::size_t>(d)] = 1;
  auto cut = [&](int axis, int parts, int index) {
    const Block b = split(shape[static_cast<std::size_t>(axis)], parts, index);
    box.lo[static_cast<std::size_t>(axis)] = b.offset;
    box.n[static_cast<std::size_t>(axis)] = b.size;
  };
  if (layout.kind == Kind::slab) {
    cut(stage == 0 ? 0 : 1, layout.ranks(), rank);
    return box;
  }
  const int row = rank / layout.cols;
  const int col = rank % layout.cols;
  static constexpr int first[3] = {0, 0, 1};
  static constexpr int second[3] = {1, 2, 2};
  cut(first[stage], layout.rows, row);
  cut(second[stage], layout.cols, col);
  return box;
}

std::vector<int> whole_axes(const Layout& layout, int stage) {
  if (layout.kind == Kind::slab) {
    std::vector<int> axes;
    const int split_axis = stage == 0 ? 0 : 1;
    for (int d = 0; d < layout.ndim; ++d)
      if (d != split_axis) axes.push_back(d);
    return axes;
  }
  return {2 - stage};  // pencil: stage 0 keeps axis 2 whole, stage 1 axis 1, stage 2 axis 0
}

std::vector<int> new_axes(const Layout& layout, int stage) {
  std::vector<int> axes = whole_axes(layout, stage);
  for (int earlier = 0; earlier < stage; ++earlier)
    for (int done : whole_axes(layout, earlier)) std::erase(axes, done);
  return axes;
}

Exchange plan_exchange(const Layout& layout, const Shape3& shape, int from, int to, int rank) {
  Exchange ex;
  const Box mine_from = stage_box(layout, shape, from, rank);
  const Box mine_to = stage_box(layout, shape, to, rank);
  for (int peer = 0; peer < layout.ranks(); ++peer) {
    const Box send = intersect(mine_from, stage_box(layout, shape, to, peer));
    if (!send.empty()) {
      ex.sends.push_back({peer, send, ex.send_total});
      ex.send_total += send.numel();
    }
    const Box recv = intersect(stage_box(layout, shape, from, peer), mine_to);
    if (!recv.empty()) {
      ex.recvs.push_back({peer, recv, ex.recv_total});
      ex.recv_total += recv.numel();
    }
  }
  return ex;
}

std::vector<Step> pipeline(const Layout& layout, Type type, bool transposed_input, bool transposed_result) {
  const int last = layout.stages() - 1;
  std::vector<Step> steps;
  auto fft = [&](int stage, bool real) {
    Step s;
    s.op = Step::Op::fft;
    s.stage = s.to = stage;
    s.axes = new_axes(layout, stage);
    s.real_side = real;
    steps.push_back(s);
  };
  auto move = [&](int from, int to) {
    Step s;
    s.op = Step::Op::exchange;
    s.stage = from;
    s.to = to;
    steps.push_back(s);
  };
  const bool reverse = type == Type::c2r || transposed_input;
  if (!reverse) {
    fft(0, type == Type::r2c);
    for (int s = 1; s <= last; ++s) {
      move(s - 1, s);
      fft(s, false);
    }
    if (!transposed_result)
      for (int s = last; s >= 1; --s) move(s, s - 1);
    return steps;
  }
  if (!transposed_input)
    for (int s = 0; s < last; ++s) move(s, s + 1);
  fft(last, false);
  for (int s = last; s >= 1; --s) {
    move(s, s - 1);
    fft(s - 1, type == Type::c2r && s - 1 == 0);
  }
  return steps;
}

std::string describe(const Layout& layout) {
  return layout.kind == Kind::slab ? fmt::format("slab ({} ranks)", layout.ranks())
                                   : fmt::format("pencil ({} x {} grid)", layout.rows, layout.cols);
}

}  // namespace cuplan::detail::dist
