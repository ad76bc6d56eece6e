// SPDX-License-Identifier: Apache-2.0
// DistributedFFT's arguments at their extremes, on the CPU: what every rank resolves alone from the global shape,
// the operand's dtype and the options (resolve_transform, which DistributedFFT::boxes and the constructor call
// before any GPU or NCCL work). Each bad value is a typed error naming the field, the expected and the actual value:
// no enum value out of range taken for another, no arithmetic overflow (run under UBSan by scripts/sanitize_cpu.sh).
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "cuplan/distributed.hpp"
#include "cuplan/errors.hpp"
#include "distributed/distributed_fft_impl.hpp"

namespace {

using cuplan::DistributedFFTOptions;
using cuplan::detail::resolve_transform;
constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();

// `call` raises `Expected` with every word of `words` in its message.
template <class Expected, class Call>
void expect_refused(Call call, std::initializer_list<std::string> words) {
  try {
    call();
    ADD_FAILURE() << "no exception";
  } catch (const Expected& e) {
    for (const std::string& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

TEST(DistributedFftArguments, EnumNamesOutsideTheEnumerationAreQuestionMarks) {
  static_assert(cuplan::to_string(cuplan::ExchangeMethod::nccl) == "nccl");
  EXPECT_EQ(cuplan::to_string(static_cast<cuplan::ExchangeMethod>(9)), "?");
  EXPECT_EQ(cuplan::to_string(static_cast<cuplan::Decomposition>(9)), "?");
  EXPECT_EQ(cuplan::to_string(static_cast<cuplan::InputLayout>(9)), "?");
  EXPECT_EQ(cuplan::to_string(cuplan::Decomposition::pencil), "pencil");
  EXPECT_EQ(cuplan::to_string(cuplan::InputLayout::transposed), "transposed");
}

TEST(DistributedFftArguments, EnumsOutOfRangeAreRefusedByNumber) {
  const cuplan::Shape g{16, 16, 16};
  DistributedFFTOptions o;
  o.decomposition = static_cast<cuplan::Decomposition>(7);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 4, g, cuplan::c64, o); },
                                          {"decomposition", "7"});
  o = {};
  o.input_layout = static_cast<cuplan::InputLayout>(5);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 4, g, cuplan::c64, o); },
                                          {"input_layout", "5"});
  o = {};
  o.result_layout = static_cast<cuplan::ResultLayout>(9);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 4, g, cuplan::c64, o); },
                                          {"result_layout", "9"});
  o = {};
  o.fft_type = static_cast<cuplan::FFTType>(11);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 4, g, cuplan::c64, o); },
                                          {"fft_type", "11"});
  o = {};
  o.normalization = static_cast<cuplan::Normalization>(13);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 4, g, cuplan::c64, o); },
                                          {"normalization", "13"});
  o = {};
  o.exchange = static_cast<cuplan::ExchangeMethod>(3);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 4, g, cuplan::c64, o); }, {"exchange", "3"});
}

TEST(DistributedFftArguments, AProcessGridWhoseProductOverflowsIsRefused) {
  const cuplan::Shape g{64, 64, 64};
  for (const std::array<int, 2> grid :
       {std::array<int, 2>{65536, 65536}, std::array<int, 2>{-65536, -65536},
        std::array<int, 2>{std::numeric_limits<int>::max(), 2}, std::array<int, 2>{-2, -2}}) {
    DistributedFFTOptions o;
    o.process_grid = grid;
    expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 4, g, cuplan::c64, o); },
                                            {"process_grid", std::to_string(grid[0])});
  }
}

TEST(DistributedFftArguments, ShapesOutOfRangeAreRefused) {
  const DistributedFFTOptions o;
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_transform(0, 2, {16}, cuplan::c64, o); },
                                          {"global_shape", "2 or 3"});
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        (void)resolve_transform(0, 2, {16, 0, 16}, cuplan::c64, o);
      },
      {"global_shape", "axis 1", "0"});
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        (void)resolve_transform(0, 2, {16, -4, 16}, cuplan::c64, o);
      },
      {"global_shape", "axis 1", "-4"});
  // More elements than an index can count.
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        (void)resolve_transform(0, 2, {big / 2, big / 2, 4}, cuplan::c64, o);
      },
      {"global_shape", "elements"});
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        (void)resolve_transform(0, 2, {std::int64_t{1} << 31, std::int64_t{1} << 31, 4}, cuplan::c128, o);
      },
      {"global_shape", "elements"});
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        (void)resolve_transform(0, 0, {16, 16}, cuplan::c64, o);
      },
      {"communicator", "0"});
}

TEST(DistributedFftArguments, LargeShapesThatFitResolve) {
  // 2^40 elements (8 TiB of c64) on 1024 ranks still resolves: only the arithmetic is checked here.
  const auto r = resolve_transform(1023, 1024, {std::int64_t{1} << 14, std::int64_t{1} << 13, std::int64_t{1} << 13},
                                   cuplan::c64, {});
  EXPECT_EQ(r.in_box.numel(), (std::int64_t{1} << 40) / 1024);
}

}  // namespace
