// SPDX-License-Identifier: Apache-2.0
// Layout arithmetic of the distributed FFT, on the CPU: block rule, boxes per stage, exchange pieces, process
// grid choice and the step sequence, for 1 to 8 ranks and extents that do not divide by the rank count.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "cuplan/distributed.hpp"
#include "cuplan/distributed_format.hpp"
#include "cuplan/errors.hpp"
#include "distributed/decomposition.hpp"

namespace dist = cuplan::detail::dist;
using Shape3 = std::array<std::int64_t, 3>;

namespace {

TEST(DistributedFormat, EnumsAndBoxesPrintByName) {
  EXPECT_EQ(fmt::format("{}", cuplan::Decomposition::pencil), "pencil");
  EXPECT_EQ(fmt::format("{}", cuplan::InputLayout::transposed), "transposed");
  EXPECT_EQ(fmt::format("{}", cuplan::ExchangeMethod::copy_engine), "copy_engine");
  EXPECT_EQ(fmt::format("{}", cuplan::DistributedMatmulAlgorithm::summa), "summa");
  EXPECT_EQ(fmt::format("{:>6}", cuplan::Decomposition::slab), "  slab");  // format specs of string_view apply
  EXPECT_EQ(fmt::format("{}", cuplan::DistributedBox{{0, 16, 0}, {64, 16, 32}}),
            "box offset [0, 16, 0] extent [64, 16, 32]");
}

// Every layout that fits `shape` on 1..8 ranks: slabs and every pencil grid.
std::vector<dist::Layout> layouts_for(int ndim) {
  std::vector<dist::Layout> out;
  for (int ranks = 1; ranks <= 8; ++ranks) {
    out.push_back({dist::Kind::slab, ndim, ranks, 1});
    if (ndim == 3)
      for (int rows = 1; rows <= ranks; ++rows)
        if (ranks % rows == 0) out.push_back({dist::Kind::pencil, 3, rows, ranks / rows});
  }
  return out;
}

bool fits(const dist::Layout& layout, const Shape3& shape) {
  for (int s = 0; s < layout.stages(); ++s)
    for (int r = 0; r < layout.ranks(); ++r)
      if (dist::stage_box(layout, shape, s, r).empty()) return false;
  return true;
}

const std::vector<Shape3> shapes3 = {{8, 8, 8}, {7, 9, 5}, {11, 13, 3}, {9, 8, 17}, {16, 5, 9}, {5, 7, 11}};
const std::vector<Shape3> shapes2 = {{8, 8, 1}, {9, 7, 1}, {13, 11, 1}, {17, 5, 1}};

// Calls visit(layout, shape) for every test shape of 2 and 3 axes with every layout of layouts_for() that fits it.
// Stops at a fatal failure (an ASSERT_ in `visit`), where the test body would have returned.
template <class Visit>
void for_each_fitting_layout(const Visit& visit) {
  for (int ndim : {2, 3})
    for (const Shape3& shape : ndim == 3 ? shapes3 : shapes2)
      for (const dist::Layout& layout : layouts_for(ndim)) {
        if (!fits(layout, shape)) continue;
        visit(layout, shape);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

}  // namespace

TEST(Split, CeilBlocksFirstThenFloorBlocksConsecutive) {
  for (std::int64_t extent = 0; extent <= 30; ++extent) {
    for (int parts = 1; parts <= 8; ++parts) {
      std::int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const dist::Block b = dist::split(extent, parts, i);
        EXPECT_EQ(b.offset, next) << extent << "/" << parts << " block " << i;
        const std::int64_t expected = extent / parts + (i < extent % parts ? 1 : 0);
        EXPECT_EQ(b.size, expected) << extent << "/" << parts << " block " << i;
        next += b.size;
      }
      EXPECT_EQ(next, extent);
    }
  }
  EXPECT_EQ(dist::split(10, 4, 0).size, 3);
  EXPECT_EQ(dist::split(10, 4, 3).offset, 8);
  EXPECT_THROW(dist::split(10, 4, 4), cuplan::InvalidArgument);
  try {
    (void)dist::split(10, 4, 4);
  } catch (const cuplan::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("expected 0..3 (4 parts), got 4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dist::split(10, 0, 0), cuplan::InvalidArgument);
}

TEST(StageBox, EveryElementOwnedByExactlyOneRankInEveryStage) {
  int checked = 0;
  for_each_fitting_layout([&](const dist::Layout& layout, const Shape3& shape) {
    for (int s = 0; s < layout.stages(); ++s) {
      std::vector<dist::Box> boxes;
      for (int r = 0; r < layout.ranks(); ++r) boxes.push_back(dist::stage_box(layout, shape, s, r));
      for (std::int64_t i = 0; i < shape[0]; ++i)
        for (std::int64_t j = 0; j < shape[1]; ++j)
          for (std::int64_t k = 0; k < shape[2]; ++k) {
            int owners = 0;
            for (const auto& b : boxes) owners += b.contains({i, j, k}) ? 1 : 0;
            ASSERT_EQ(owners, 1) << dist::describe(layout) << " stage " << s << " at (" << i << "," << j << "," << k
                                 << ") of " << shape[0] << "x" << shape[1] << "x" << shape[2];
          }
      ++checked;
    }
  });
  if (HasFatalFailure()) return;  // as an ASSERT_ in the loop did
  EXPECT_GT(checked, 100);
}

TEST(StageBox, WholeAxesAreWholeAndTheOthersSplit) {
  const Shape3 shape{12, 12, 12};
  for (const dist::Layout& layout : layouts_for(3)) {
    for (int s = 0; s < layout.stages(); ++s) {
      const auto whole = dist::whole_axes(layout, s);
      for (int r = 0; r < layout.ranks(); ++r) {
        const dist::Box b = dist::stage_box(layout, shape, s, r);
        for (int axis : whole) EXPECT_EQ(b.n[static_cast<std::size_t>(axis)], 12) << dist::describe(layout);
      }
    }
  }
  // Pencil rank = row * cols + col; stage 0 splits axis 0 by rows and axis 1 by cols.
  const dist::Layout grid{dist::Kind::pencil, 3, 2, 3};
  const dist::Box b = dist::stage_box(grid, {7, 8, 9}, 0, 5);  // row 1, col 2
  EXPECT_EQ(b.lo, (Shape3{4, 6, 0}));
  EXPECT_EQ(b.n, (Shape3{3, 2, 9}));
}

TEST(Exchange, SendsMatchReceivesAndCoverBothBoxes) {
  int checked = 0;
  for_each_fitting_layout([&](const dist::Layout& layout, const Shape3& shape) {
    for (int from = 0; from < layout.stages(); ++from) {
      for (int to = 0; to < layout.stages(); ++to) {
        if (from == to) continue;
        std::vector<dist::Exchange> ex;
        for (int r = 0; r < layout.ranks(); ++r) ex.push_back(dist::plan_exchange(layout, shape, from, to, r));
        for (int r = 0; r < layout.ranks(); ++r) {
          EXPECT_EQ(ex[r].send_total, dist::stage_box(layout, shape, from, r).numel());
          EXPECT_EQ(ex[r].recv_total, dist::stage_box(layout, shape, to, r).numel());
          std::int64_t offset = 0;
          for (const auto& p : ex[r].sends) {
            EXPECT_EQ(p.offset, offset);
            offset += p.box.numel();
            // The peer receives exactly this box from r.
            const auto& peer_recvs = ex[static_cast<std::size_t>(p.peer)].recvs;
            int matches = 0;
            for (const auto& q : peer_recvs)
              if (q.peer == r) {
                EXPECT_EQ(q.box, p.box) << dist::describe(layout) << " " << from << "->" << to;
                ++matches;
              }
            EXPECT_EQ(matches, 1);
          }
          // Receives cover the rank's destination box exactly once.
          const dist::Box mine = dist::stage_box(layout, shape, to, r);
          std::set<std::int64_t> seen;
          for (const auto& q : ex[r].recvs)
            for (std::int64_t i = q.box.lo[0]; i < q.box.lo[0] + q.box.n[0]; ++i)
              for (std::int64_t j = q.box.lo[1]; j < q.box.lo[1] + q.box.n[1]; ++j)
                for (std::int64_t k = q.box.lo[2]; k < q.box.lo[2] + q.box.n[2]; ++k) {
                  ASSERT_TRUE(mine.contains({i, j, k}));
                  EXPECT_TRUE(seen.insert(dist::local_offset(mine, {i, j, k})).second);
                }
          EXPECT_EQ(static_cast<std::int64_t>(seen.size()), mine.numel());
        }
        ++checked;
      }
    }
  });
  if (HasFatalFailure()) return;  // as an ASSERT_ in the loop did
  EXPECT_GT(checked, 100);
}

TEST(Exchange, PencilTalksOnlyWithinItsRowOrColumn) {
  const dist::Layout grid{dist::Kind::pencil, 3, 2, 4};
  for (int r = 0; r < 8; ++r) {
    for (const auto& p : dist::plan_exchange(grid, {16, 16, 16}, 0, 1, r).sends) EXPECT_EQ(p.peer / 4, r / 4);
    for (const auto& p : dist::plan_exchange(grid, {16, 16, 16}, 1, 2, r).sends) EXPECT_EQ(p.peer % 4, r % 4);
  }
}

TEST(LocalOffset, RowMajorInsideTheOwnerBox) {
  dist::Box owner;
  owner.lo = {2, 3, 4};
  owner.n = {5, 6, 7};
  EXPECT_EQ(dist::local_offset(owner, {2, 3, 4}), 0);
  EXPECT_EQ(dist::local_offset(owner, {2, 3, 5}), 1);
  EXPECT_EQ(dist::local_offset(owner, {2, 4, 4}), 7);
  EXPECT_EQ(dist::local_offset(owner, {3, 3, 4}), 42);
  EXPECT_EQ(dist::local_offset(owner, {6, 8, 10}), 5 * 6 * 7 - 1);
}

TEST(Resolve, AutomaticPrefersSlabThenTheMostSquarePencil) {
  using R = dist::Request;
  auto l = dist::resolve(R::automatic, {}, {64, 64, 64}, 64, 4);
  EXPECT_EQ(l.kind, dist::Kind::slab);
  EXPECT_EQ(l.rows, 4);
  l = dist::resolve(R::automatic, {}, {4, 64, 64}, 64, 8);  // axis 0 too short for 8 slabs
  EXPECT_EQ(l.kind, dist::Kind::pencil);
  EXPECT_EQ(l.rows, 2);
  EXPECT_EQ(l.cols, 4);
  l = dist::resolve(R::pencil, {}, {64, 64, 64}, 64, 6);
  EXPECT_EQ(l.rows * l.cols, 6);
  EXPECT_EQ(l.rows, 2);
  l = dist::resolve(R::pencil, std::array<int, 2>{4, 1}, {64, 64, 64}, 64, 4);
  EXPECT_EQ(l.rows, 4);
  EXPECT_EQ(l.cols, 1);
  l = dist::resolve(R::automatic, {}, {9, 7}, 4, 3);  // 2D R2C: the last complex extent 4 >= 3
  EXPECT_EQ(l.kind, dist::Kind::slab);
  EXPECT_EQ(l.ndim, 2);
}

TEST(Resolve, BadRequestsThrowInvalidArgumentNamingTheProblem) {
  using R = dist::Request;
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const cuplan::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([] { dist::resolve(R::pencil, {}, {8, 8}, 8, 2); }).find("pencil needs a 3D"), std::string::npos);
  EXPECT_NE(message([] {
              dist::resolve(R::pencil, std::array<int, 2>{2, 3}, {8, 8, 8}, 8, 4);
            }).find("6 ranks"),
            std::string::npos);
  EXPECT_NE(message([] { dist::resolve(R::slab, {}, {3, 8, 8}, 8, 4); }).find("axis 0 (extent 3)"), std::string::npos);
  // 2D R2C: the halved last axis (5/2+1 = 3) cannot be split over 4 ranks.
  EXPECT_NE(message([] {
              dist::resolve(R::automatic, {}, {8, 5}, 3, 4);
            }).find("axis 1 (extent 3)"),
            std::string::npos);
  EXPECT_NE(message([] {
              dist::resolve(R::automatic, {}, {8, 8, 8, 8}, 8, 2);
            }).find("2 or 3 dimensions"),
            std::string::npos);
  EXPECT_NE(message([] { dist::resolve(R::automatic, {}, {1, 1, 2}, 2, 2); }).find("does not fit"), std::string::npos);
}

TEST(Pipeline, EveryAxisTransformedOnceInAWholeStageAndTheEndStageIsRight) {
  for (int ndim : {2, 3}) {
    for (const dist::Layout& layout : layouts_for(ndim)) {
      for (auto type : {dist::Type::c2c, dist::Type::r2c, dist::Type::c2r}) {
        for (bool tin : {false, true}) {
          for (bool tout : {false, true}) {
            if ((type == dist::Type::r2c && tin) || (type == dist::Type::c2r && tout) || (tin && tout)) continue;
            const auto steps = dist::pipeline(layout, type, tin, tout);
            const int last = layout.stages() - 1;
            int stage = tin ? last : 0;
            std::map<int, int> count;
            for (std::size_t i = 0; i < steps.size(); ++i) {
              const auto& s = steps[i];
              EXPECT_EQ(s.stage, stage);
              if (s.op == dist::Step::Op::exchange) {
                EXPECT_EQ(std::abs(s.to - s.stage), 1);
                stage = s.to;
                continue;
              }
              const auto whole = dist::whole_axes(layout, stage);
              for (int a : s.axes) {
                EXPECT_NE(std::find(whole.begin(), whole.end(), a), whole.end());
                ++count[a];
              }
              // Only R2C's first and C2R's last transform touch the real side, along the last axis.
              const bool real =
                  (type == dist::Type::r2c && i == 0) || (type == dist::Type::c2r && i + 1 == steps.size());
              EXPECT_EQ(s.real_side, real);
              if (real) {
                EXPECT_EQ(s.axes.back(), ndim - 1);
              }
            }
            for (int a = 0; a < ndim; ++a) EXPECT_EQ(count[a], 1) << "axis " << a << " " << dist::describe(layout);
            EXPECT_EQ(stage, tout ? last : 0);
          }
        }
      }
    }
  }
}

TEST(Pipeline, SlabForwardOptimizedHasOneExchangeAndNaturalTwo) {
  const dist::Layout slab{dist::Kind::slab, 3, 4, 1};
  auto exchanges = [](const std::vector<dist::Step>& steps) {
    return std::count_if(steps.begin(), steps.end(), [](const auto& s) { return s.op == dist::Step::Op::exchange; });
  };
  EXPECT_EQ(exchanges(dist::pipeline(slab, dist::Type::c2c, false, true)), 1);
  EXPECT_EQ(exchanges(dist::pipeline(slab, dist::Type::c2c, false, false)), 2);
  EXPECT_EQ(exchanges(dist::pipeline(slab, dist::Type::c2r, true, false)), 1);
  const dist::Layout pencil{dist::Kind::pencil, 3, 2, 2};
  EXPECT_EQ(exchanges(dist::pipeline(pencil, dist::Type::r2c, false, true)), 2);
  EXPECT_EQ(exchanges(dist::pipeline(pencil, dist::Type::r2c, false, false)), 4);
}
