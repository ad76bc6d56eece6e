// SPDX-License-Identifier: Apache-2.0
// DistributedFFT on the GPUs of one machine, ranks as threads over Communicator::local_all. Each case scatters a
// random global array, runs the distributed transform into poisoned outputs, gathers the result and compares it with
// the single-GPU float64 FFT of the whole array, for slab and pencil, C2C/R2C/C2R, f32/f64, natural and optimized
// layouts, odd extents. Rank counts above the visible GPUs skip with the count.
#include "distributed_test_util.cuh"

namespace {

std::vector<Case> all_cases(int ranks) {
  std::vector<Case> cases;
  // Odd extents: 9, 7, 5 do not divide by 2 or 4; the 2D shape is a slab only.
  const std::vector<std::vector<std::int64_t>> shapes3 = {{9, 8, 7}, {12, 10, 8}};
  for (auto type : {FFTType::c2c, FFTType::r2c, FFTType::c2r})
    for (bool f64 : {true, false})
      for (auto dec : {Decomposition::slab, Decomposition::pencil})
        for (const auto& shape : shapes3)
          for (auto layout : {cuplan::ResultLayout::natural, cuplan::ResultLayout::optimized}) {
            if (type == FFTType::c2r && layout == cuplan::ResultLayout::optimized) continue;
            cases.push_back({type, dec, {}, shape, layout, cuplan::Direction::forward, f64});
          }
  cases.push_back({FFTType::c2c, Decomposition::slab, {}, {11, 6}, {}, cuplan::Direction::inverse, true});
  cases.push_back({FFTType::r2c, Decomposition::slab, {}, {13, 10}, {}, {}, false});
  cases.push_back({FFTType::c2r, Decomposition::slab, {}, {10, 9}, {}, {}, true});
  cases.push_back({FFTType::c2c, Decomposition::pencil, {}, {9, 8, 7}, {}, cuplan::Direction::inverse, true});
  if (ranks == 4) {
    cases.push_back({FFTType::c2c, Decomposition::pencil, std::array<int, 2>{1, 4}, {9, 8, 7}, {}, {}, true});
    cases.push_back({FFTType::r2c, Decomposition::pencil, std::array<int, 2>{4, 1}, {9, 8, 7}, {}, {}, false});
  }
  if (ranks == 1) return cases;
  // Every case by both exchange routes: NCCL, and copy engines in 1 chunk, the chosen count and 3 (9 and 12 rows
  // over the ranks give chunks of unequal length).
  std::vector<Case> all;
  for (Case c : cases) {
    c.exchange = cuplan::ExchangeMethod::nccl;
    all.push_back(c);
    c.exchange = cuplan::ExchangeMethod::copy_engine;
    for (int chunks : {0, 1, 3}) {
      c.chunks = chunks;
      all.push_back(c);
    }
  }
  return all;
}

void correctness(int ranks) {
  auto comms = local_comms(ranks);
  for (const Case& c : all_cases(ranks)) check_case(c, comms);
}

// Each case on one rank, or by copy engines and by NCCL on several.
void check_on_both_routes(std::vector<Case> cases, int ranks, std::vector<Communicator>& comms) {
  for (Case c : cases) {
    if (ranks == 1) {
      check_case(c, comms);
      continue;
    }
    for (auto method : {cuplan::ExchangeMethod::copy_engine, cuplan::ExchangeMethod::nccl}) {
      c.exchange = method;
      check_case(c, comms);
    }
  }
}

// Several fields in one execute, run one after another through the same buffers (3 and 4 fields: the buffers are
// reused); every field has its own data and reference.
void fields_correctness(int ranks) {
  auto comms = local_comms(ranks);
  std::vector<Case> cases;
  for (int fields : {3, 4})
    for (auto layout : {cuplan::ResultLayout::optimized, cuplan::ResultLayout::natural}) {
      cases.push_back({FFTType::c2c, Decomposition::slab, {}, {12, 10, 8}, layout, {}, false, {}, 0, fields});
      cases.push_back({FFTType::r2c, Decomposition::slab, {}, {9, 8, 7}, layout, {}, true, {}, 3, fields});
      cases.push_back({FFTType::c2c,
                       Decomposition::pencil,
                       {},
                       {9, 8, 7},
                       layout,
                       cuplan::Direction::inverse,
                       true,
                       {},
                       0,
                       fields});
    }
  cases.push_back({FFTType::c2r, Decomposition::slab, {}, {10, 9, 6}, {}, {}, true, {}, 0, 3});
  cases.push_back(
      {FFTType::c2c, Decomposition::slab, {}, {11, 6}, cuplan::ResultLayout::optimized, {}, true, {}, 1, 3});
  check_on_both_routes(cases, ranks, comms);
}

}  // namespace

TEST(DistributedFFT, MatchesSingleGpuFftOn1Rank) {
  CUPLAN_REQUIRE_GPUS(1);
  correctness(1);
}
TEST(DistributedFFT, MatchesSingleGpuFftOn2Ranks) {
  CUPLAN_REQUIRE_GPUS(2);
  correctness(2);
}
TEST(DistributedFFT, MatchesSingleGpuFftOn4Ranks) {
  CUPLAN_REQUIRE_GPUS(4);
  correctness(4);
}
// In place: C2C slab and pencil, natural and optimized, one and three fields, by both routes, with extents the rank
// counts divide (every output box fits in its input box).
void inplace_correctness(int ranks) {
  auto comms = local_comms(ranks);
  std::vector<Case> cases;
  for (int fields : {1, 3})
    for (auto layout : {cuplan::ResultLayout::optimized, cuplan::ResultLayout::natural})
      for (auto dec : {Decomposition::slab, Decomposition::pencil}) {
        Case c{FFTType::c2c, dec, {}, {8, 12, 16}, layout, {}, true, {}, 0, fields, true};
        cases.push_back(c);
        c.f64 = false;
        c.direction = cuplan::Direction::inverse;
        c.chunks = 3;
        cases.push_back(c);
      }
  check_on_both_routes(cases, ranks, comms);
}

TEST(DistributedFFT, InPlaceMatchesSingleGpuFftOn1Rank) {
  CUPLAN_REQUIRE_GPUS(1);
  inplace_correctness(1);
}
TEST(DistributedFFT, InPlaceMatchesSingleGpuFftOn2Ranks) {
  CUPLAN_REQUIRE_GPUS(2);
  inplace_correctness(2);
}
TEST(DistributedFFT, InPlaceMatchesSingleGpuFftOn4Ranks) {
  CUPLAN_REQUIRE_GPUS(4);
  inplace_correctness(4);
}
TEST(DistributedFFT, FieldsMatchSingleGpuFftsOn1Rank) {
  CUPLAN_REQUIRE_GPUS(1);
  fields_correctness(1);
}
TEST(DistributedFFT, FieldsMatchSingleGpuFftsOn2Ranks) {
  CUPLAN_REQUIRE_GPUS(2);
  fields_correctness(2);
}
TEST(DistributedFFT, FieldsMatchSingleGpuFftsOn4Ranks) {
  CUPLAN_REQUIRE_GPUS(4);
  fields_correctness(4);
}
