// SPDX-License-Identifier: Apache-2.0
// The position helpers of cuplan/fft_callback_device.hpp (index, indices, flat_index), which divide an offset by a
// stride through the stride's double reciprocal and an integer correction, against 64-bit integer division: on
// Info blocks from make_callback_info over random layouts (dense, padded, non-power-of-two, rank 1 to 4, axes of
// length 1) at random offsets up to 2^53, at every offset of small layouts, and on hand-filled blocks at offsets
// where the double product alone is one off either way.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "cuplan/fft_callback_device.hpp"
#include "fft/callbacks/callback_types.hpp"

namespace cuplan::testing {
namespace {

using fft_callback::Info;

// The block is written to device memory by value (a kernel parameter, at most 4 KiB).
static_assert(std::is_trivially_copyable_v<Info>);
static_assert(sizeof(Info) <= 512);

constexpr long long two_to(int bits) {
  return 1LL << bits;
}
constexpr long long offset_limit = two_to(53);  // the helpers' precondition: offsets below 2^53

struct Layout {
  Shape shape;
  Strides strides;
};

std::string describe(const Info& info) {
  std::ostringstream out;
  out << "rank " << info.rank << ", terms (axis:extent:stride)";
  for (int k = 0; k < info.terms; ++k) out << ' ' << info.axis[k] << ':' << info.extent[k] << ':' << info.stride[k];
  return out.str();
}

// The helpers as written before the reciprocals: 64-bit integer division, largest stride first, and the flat index
// by Horner's rule over the rank (axes not in the terms have extent 1).
struct Positions {
  std::vector<long long> index;
  long long flat = 0;
};

Positions divide_naively(long long offset, const Info& info) {
  Positions p;
  p.index.assign(static_cast<std::size_t>(info.rank), 0);
  std::vector<long long> extent(static_cast<std::size_t>(info.rank), 1);
  long long rest = offset;
  for (int k = 0; k < info.terms; ++k) {
    const auto a = static_cast<std::size_t>(info.axis[k]);
    p.index[a] = rest / info.stride[k];
    rest -= p.index[a] * info.stride[k];
    extent[a] = info.extent[k];
  }
  for (std::size_t a = 0; a < p.index.size(); ++a) p.flat = p.flat * extent[a] + p.index[a];
  return p;
}

// indices, index along every axis and flat_index at `offset` against divide_naively.
::testing::AssertionResult helpers_agree(long long offset, const Info& info) {
  const Positions expected = divide_naively(offset, info);
  const auto at = static_cast<unsigned long long>(offset);
  long long index[fft_callback::max_rank];
  fft_callback::indices(at, &info, index);
  for (int a = 0; a < info.rank; ++a) {
    const long long want = expected.index[static_cast<std::size_t>(a)];
    const long long single = fft_callback::index(at, &info, a);
    if (index[a] != want || single != want)
      return ::testing::AssertionFailure()
             << "offset " << offset << ", axis " << a << ": indices gives " << index[a] << ", index gives " << single
             << ", division gives " << want << " (" << describe(info) << ")";
  }
  const long long flat = fft_callback::flat_index(at, &info);
  if (flat != expected.flat)
    return ::testing::AssertionFailure() << "offset " << offset << ": flat_index gives " << flat << ", division gives "
                                         << expected.flat << " (" << describe(info) << ")";
  return ::testing::AssertionSuccess();
}

// The offset of the element at `index`, and its row-major position in a dense array of the shape.
long long offset_of(const Layout& l, const std::vector<long long>& index) {
  long long offset = 0;
  for (int a = 0; a < l.shape.size(); ++a) offset += index[static_cast<std::size_t>(a)] * l.strides[a];
  return offset;
}
long long row_major_position(const Layout& l, const std::vector<long long>& index) {
  long long flat = 0;
  for (int a = 0; a < l.shape.size(); ++a) flat = flat * l.shape[a] + index[static_cast<std::size_t>(a)];
  return flat;
}

// The helpers name exactly the element at its own offset, whatever the order of the strides.
::testing::AssertionResult names_element(const Layout& l, const Info& info, const std::vector<long long>& index) {
  const auto offset = static_cast<unsigned long long>(offset_of(l, index));
  long long found[fft_callback::max_rank];
  fft_callback::indices(offset, &info, found);
  for (int a = 0; a < l.shape.size(); ++a)
    if (found[a] != index[static_cast<std::size_t>(a)] || fft_callback::index(offset, &info, a) != found[a])
      return ::testing::AssertionFailure()
             << "element offset " << offset << ", axis " << a << ": got " << found[a] << ", expected "
             << index[static_cast<std::size_t>(a)] << " (" << describe(info) << ")";
  if (fft_callback::flat_index(offset, &info) != row_major_position(l, index))
    return ::testing::AssertionFailure() << "element offset " << offset << ": flat_index "
                                         << fft_callback::flat_index(offset, &info) << ", expected "
                                         << row_major_position(l, index) << " (" << describe(info) << ")";
  return ::testing::AssertionSuccess();
}

long long span_of(const Layout& l) {  // the largest element offset
  long long span = 0;
  for (int a = 0; a < l.shape.size(); ++a) span += (l.shape[a] - 1) * l.strides[a];
  return span;
}

long long draw(std::mt19937_64& rng, long long lo, long long hi) {  // uniform in [lo, hi]
  return std::uniform_int_distribution<long long>(lo, hi)(rng);
}

// A layout of `rank` axes in a random stride order: extents of 1, small primes, powers of two and random values;
// innermost stride 1 or more; each further axis steps past the one inside it with no padding, a little, a lot, or
// to a stride just above 2^26. With `top` (2^40 or 2^52), the outermost axis's stride takes the span near `top`.
Layout random_layout(std::mt19937_64& rng, int rank, long long top, long long max_extent) {
  static const long long kExtents[] = {1, 2, 3, 5, 7, 12, 48, 100, 127, 128, 1000, 4096};
  for (;;) {
    Layout l{Shape::filled(rank, 1), Strides::filled(rank, 0)};
    for (int a = 0; a < rank; ++a) {
      const long long pick = draw(rng, 0, 15);
      l.shape[a] = std::min(pick < 12 ? kExtents[pick] : draw(rng, 2, 300), max_extent);
    }
    std::vector<int> order;  // the axes longer than 1, innermost first
    for (int a = 0; a < rank; ++a) {
      if (l.shape[a] > 1)
        order.push_back(a);
      else
        l.strides[a] = draw(rng, 0, two_to(40));  // any stride: make_callback_info leaves such an axis out
    }
    std::shuffle(order.begin(), order.end(), rng);
    long long step = draw(rng, 0, 1) == 0 ? 1 : draw(rng, 2, 5);  // the innermost stride
    bool fits = true;
    for (std::size_t position = 0; position < order.size() && fits; ++position) {
      const int a = order[position];
      const long long pad_kind = draw(rng, 0, 5);
      if (pad_kind == 1) step += draw(rng, 1, 64);
      if (pad_kind == 2) step += draw(rng, 1, step);
      if (pad_kind == 3 && step < two_to(26)) step = two_to(26) + draw(rng, 1, 65536);
      if (position + 1 == order.size() && top > 0)
        step = std::max(step, draw(rng, top / (2 * l.shape[a]), 2 * top / l.shape[a]));
      l.strides[a] = step;
      fits = step < offset_limit / l.shape[a];
      if (fits) step *= l.shape[a];  // else the layout is drawn again (the product could overflow)
    }
    if (fits && span_of(l) < offset_limit) return l;
  }
}

Info info_of(const Layout& l) {
  return detail::make_callback_info(l.shape, l.strides, nullptr, "prolog 'test'");
}

std::vector<long long> random_index(std::mt19937_64& rng, const Layout& l) {
  std::vector<long long> index(static_cast<std::size_t>(l.shape.size()));
  for (int a = 0; a < l.shape.size(); ++a) index[static_cast<std::size_t>(a)] = draw(rng, 0, l.shape[a] - 1);
  return index;
}

TEST(FftCallbackPositions, MakeCallbackInfoFillsReciprocalsAndDenseStrides) {
  // Shape [3, 1, 5, 7], axis 0 innermost (stride 1), axis 3 outermost with padding: terms by decreasing stride.
  const Info info = info_of({{3, 1, 5, 7}, {1, 999, 4, 23}});
  ASSERT_EQ(info.terms, 3);
  const int axis[] = {3, 2, 0};
  const long long stride[] = {23, 4, 1}, dense[] = {1, 7, 35};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(info.axis[k], axis[k]);
    EXPECT_EQ(info.stride[k], stride[k]);
    EXPECT_EQ(info.reciprocal[k], 1.0 / static_cast<double>(stride[k]));
    EXPECT_EQ(info.dense_stride[k], dense[k]);
  }
}

TEST(FftCallbackPositions, RandomLayoutsAgreeWithIntegerDivisionUpTo2To53) {
  std::mt19937_64 rng(20261128);
  int near_2_40 = 0, near_2_52 = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    const long long top = trial % 3 == 0 ? 0 : trial % 3 == 1 ? two_to(40) : two_to(52);
    const Layout l = random_layout(rng, 1 + trial % 4, top, 4096);
    const Info info = info_of(l);
    const long long span = span_of(l);
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(names_element(l, info, random_index(rng, l)));
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(helpers_agree(draw(rng, 0, span), info));
    for (long long j = 0; j < 20 && j <= span; ++j) ASSERT_TRUE(helpers_agree(span - j, info));
    for (const long long centre : {two_to(40), two_to(52)}) {
      if (span < centre) continue;
      (centre == two_to(40) ? near_2_40 : near_2_52) += 1;
      for (int i = 0; i < 50; ++i)
        ASSERT_TRUE(helpers_agree(draw(rng, centre - two_to(20), std::min(span, centre + two_to(20))), info));
    }
    // Either side of multiples of each stride, where a quotient changes.
    for (int k = 0; k < info.terms; ++k)
      for (int i = 0; i < 20; ++i) {
        const long long multiple = draw(rng, 1, span / info.stride[k] + 1) * info.stride[k];
        for (const long long offset : {multiple - 1, multiple, multiple + 1})
          if (offset <= span) {
            ASSERT_TRUE(helpers_agree(offset, info));
          }
      }
  }
  EXPECT_GT(near_2_40, 2000);
  EXPECT_GT(near_2_52, 1000);
}

TEST(FftCallbackPositions, EveryOffsetOfSmallLayoutsAgreesAndEveryElementIsNamedOnce) {
  std::mt19937_64 rng(7);
  int layouts = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Layout l = random_layout(rng, 1 + trial % 4, 0, trial % 4 < 2 ? 40 : 9);
    const Info info = info_of(l);
    const long long span = span_of(l);
    if (span > 20000) continue;
    ++layouts;
    for (long long offset = 0; offset <= span; ++offset) ASSERT_TRUE(helpers_agree(offset, info));
    long long elements = 1;
    for (const auto e : l.shape) elements *= e;
    std::vector<int> hits(static_cast<std::size_t>(elements), 0);
    std::vector<long long> index(static_cast<std::size_t>(l.shape.size()), 0);
    for (long long n = 0; n < elements; ++n) {  // row-major walk of the shape
      ASSERT_TRUE(names_element(l, info, index));
      ++hits[static_cast<std::size_t>(
          fft_callback::flat_index(static_cast<unsigned long long>(offset_of(l, index)), &info))];
      for (int a = l.shape.size() - 1; a >= 0; --a) {
        auto& i = index[static_cast<std::size_t>(a)];
        if (++i < l.shape[a]) break;
        i = 0;
      }
    }
    for (const int h : hits) ASSERT_EQ(h, 1) << describe(info);
  }
  EXPECT_GT(layouts, 150);
}

// A hand-filled block of rank 2: rows of `row` elements (stride `row`, extent `rows`) over a dense inner axis.
Info rows_of(long long row, long long rows) {
  Info info{};
  info.rank = 2;
  info.terms = row > 1 ? 2 : 1;
  info.axis[0] = 0;
  info.extent[0] = rows;
  info.stride[0] = row;
  info.reciprocal[0] = 1.0 / static_cast<double>(row);
  info.dense_stride[0] = row;
  info.axis[1] = 1;
  info.extent[1] = row;
  info.stride[1] = 1;
  info.reciprocal[1] = 1.0;
  info.dense_stride[1] = 1;
  return info;
}

TEST(FftCallbackPositions, OffsetsWhereTheDoubleProductIsOneOffAreCorrected) {
  // 49 * (1.0 / 49) rounds to just below 1: the first element of the second row of 49 would be row 0, element 49.
  const Info rows_of_49 = rows_of(49, 1000);
  EXPECT_EQ(fft_callback::index(49, &rows_of_49, 0), 1);
  EXPECT_EQ(fft_callback::index(49, &rows_of_49, 1), 0);
  EXPECT_EQ(fft_callback::flat_index(49, &rows_of_49), 49);

  // Strides whose reciprocal rounds up or down (just above 2^26, non-powers of two, up to 2^52 and past it), at
  // both sides of multiples near 2^53, 2^52, 2^40 and near 0; and the offsets found to need a correction.
  const long long strides[] = {2,
                               3,
                               49,
                               98,
                               234,
                               12345,
                               100000007,
                               33484546,
                               two_to(26) + 1,
                               two_to(26) + 3,
                               two_to(26) + 256,
                               two_to(26) + 10890,
                               two_to(40) + 13,
                               17463877751092,
                               1016898895641137,
                               two_to(52) - 1,
                               two_to(52) + 1,
                               (two_to(53) - 1) / 3};
  std::mt19937_64 rng(3);
  long long product_below = 0, product_above = 0, checked = 0;
  for (const long long s : strides) {
    const Info info = rows_of(s, (offset_limit - 1) / s + 1);
    std::vector<long long> quotients;
    for (long long q = 1; q <= 16; ++q) quotients.push_back(q);
    for (const long long at : {offset_limit, two_to(52), two_to(40)})
      for (long long j = 0; j < 3000; ++j) quotients.push_back(at / s - j);
    for (int i = 0; i < 3000; ++i) quotients.push_back(draw(rng, 1, (offset_limit - 1) / s));
    for (const long long q : quotients) {
      if (q < 1 || q > offset_limit / s) continue;  // before the products below, which could overflow
      for (const long long offset : {q * s - 1, q * s, q * s + 1, q * s + s - 1}) {
        if (offset >= offset_limit) continue;
        ++checked;
        ASSERT_TRUE(helpers_agree(offset, info));
        const auto product = static_cast<long long>(static_cast<double>(offset) * info.reciprocal[0]);
        product_below += product < offset / s ? 1 : 0;
        product_above += product > offset / s ? 1 : 0;
      }
    }
  }
  // The offsets above include some where the double product alone is one short and some where it is one over, so
  // a correction missing on either side would fail this test.
  EXPECT_GT(product_below, 0) << "of " << checked;
  EXPECT_GT(product_above, 0) << "of " << checked;

  // A stride of 1 up to the last offset below 2^53.
  const Info unit = rows_of(1, offset_limit);
  for (const long long offset : {0LL, 1LL, two_to(52) + 1, offset_limit - 1}) {
    EXPECT_EQ(fft_callback::index(static_cast<unsigned long long>(offset), &unit, 0), offset);
    EXPECT_EQ(fft_callback::flat_index(static_cast<unsigned long long>(offset), &unit), offset);
  }
}

}  // namespace
}  // namespace cuplan::testing
