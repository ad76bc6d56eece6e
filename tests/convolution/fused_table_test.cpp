// SPDX-License-Identifier: Apache-2.0
// The fused convolution kernels a MathDx build holds, without a GPU: every compiled length has its row kernels (1D:
// c64, c128, real f32, real f64) and its column kernels (2D and 3D: c64, and c128 up to 8192), and each column
// kernel's launch shape keeps the limits its route relies on (one FFT per column of the tile, at most 1024 threads,
// the tile within 128 KiB of columns, shared memory within sm_90's 227 KiB per block); every whole-transform tile
// holds its entry and the FFTs' scratch in one block.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "cuplan/config.hpp"
#if CUPLAN_HAS_FUSED_FFT
#include "convolution/cuda/fused_launch.hpp"
#endif

namespace {

TEST(ConvolutionFusedTable, EveryCompiledLengthHasItsRowAndColumnKernels) {
#if CUPLAN_HAS_FUSED_FFT
  namespace fused = cuplan::detail::fused;
  std::vector<int> lengths;
  for (const fused::FusedLauncher* launcher : fused::launchers())
    if (std::find(lengths.begin(), lengths.end(), launcher->length) == lengths.end())
      lengths.push_back(launcher->length);
  ASSERT_FALSE(lengths.empty());
  EXPECT_EQ(fused::launchers().size(), 4 * lengths.size());
  std::size_t columns_expected = 0;
  for (int length : lengths) {
    SCOPED_TRACE(length);
    EXPECT_EQ(length & (length - 1), 0);
    for (fused::FusedKind kind :
         {fused::FusedKind::c2c_f32, fused::FusedKind::c2c_f64, fused::FusedKind::r2c_f32, fused::FusedKind::r2c_f64})
      EXPECT_NE(fused::find_launcher(kind, length), nullptr);
    for (fused::FusedKind kind : {fused::FusedKind::c2c_f32, fused::FusedKind::c2c_f64}) {
      const bool f64 = kind == fused::FusedKind::c2c_f64;
      const fused::FusedColumnLauncher* columns = fused::find_column_launcher(kind, length);
      if (f64 && length > 8192) {
        EXPECT_EQ(columns, nullptr) << "a c128 column of " << length << " does not fit the tile";
        continue;
      }
      ++columns_expected;
      ASSERT_NE(columns, nullptr) << (f64 ? "c128" : "c64");
      const unsigned element = f64 ? 16 : 8;
      EXPECT_GE(columns->columns_per_block, 1u);
      EXPECT_LE(columns->columns_per_block, 16u);
      EXPECT_EQ(columns->block.ffts_per_block, columns->columns_per_block);
      EXPECT_LE(columns->block.threads_x * columns->block.ffts_per_block, 1024u);
      // The split route (three passes of length / split and split rows) where a block would hold two columns or
      // fewer of the whole length; a tile of rows of the block's FFT length either way.
      const bool split = columns->split > 1;
      EXPECT_EQ(split, static_cast<unsigned>(length) * element * 2 >= 128u * 1024u) << columns->split;
      if (split) {
        EXPECT_EQ(columns->split & (columns->split - 1), 0);
        EXPECT_EQ(length % columns->split, 0);
        EXPECT_EQ(columns->columns_per_block * element, 128u) << "a 128-byte row segment";
      }
      const unsigned rows = static_cast<unsigned>(length / columns->split);
      EXPECT_LE(rows * element * columns->columns_per_block, 128u * 1024u);
      EXPECT_GE(columns->block.shared_bytes, rows * element * columns->columns_per_block);
      EXPECT_LE(columns->block.shared_bytes, 227u * 1024u);
      EXPECT_NE(columns->launch, nullptr);
      EXPECT_NE(columns->block.prepare, nullptr);
    }
  }
  EXPECT_EQ(fused::column_launchers().size(), columns_expected);
  EXPECT_EQ(fused::find_column_launcher(fused::FusedKind::r2c_f32, lengths.front()), nullptr);
  EXPECT_EQ(fused::find_column_launcher(fused::FusedKind::c2c_f32, 1000), nullptr);
#else
  GTEST_SKIP() << "this build has no MathDx (CUPLAN_HAS_FUSED_FFT is 0): no fused kernels to list";
#endif
}

TEST(ConvolutionFusedTable, WholeTransformTilesHoldTheirEntryInOneBlock) {
#if CUPLAN_HAS_FUSED_FFT
  namespace fused = cuplan::detail::fused;
  if (fused::block_launchers().empty()) GTEST_SKIP() << "this build compiled no tile (CUPLAN_FUSED_BLOCK_SHAPES empty)";
  for (const fused::FusedBlockLauncher* tile : fused::block_launchers()) {
    const int n0 = tile->lengths[0], n1 = tile->lengths[1], n2 = tile->lengths[2];
    SCOPED_TRACE(::testing::Message() << n0 << "x" << n1 << "x" << n2);
    const bool f64 = tile->kind == fused::FusedKind::c2c_f64;
    ASSERT_TRUE(f64 || tile->kind == fused::FusedKind::c2c_f32) << "complex arithmetic only, real operands too";
    for (int n : {n1, n2}) {
      EXPECT_GE(n, 16);
      EXPECT_EQ(n & (n - 1), 0);
    }
    EXPECT_TRUE(n0 == 1 || (n0 >= 16 && (n0 & (n0 - 1)) == 0)) << "1 in 2D";
    const unsigned values = static_cast<unsigned>(n0 * n1 * n2), element = f64 ? 16 : 8;
    EXPECT_LE(values, f64 ? 4096u : 16384u);
    // The tile (padded rows) and the FFTs' scratch in one block's shared memory; whole warps, at most 1024 threads.
    EXPECT_GE(tile->block.shared_bytes, values * element);
    EXPECT_LE(tile->block.shared_bytes, 227u * 1024u);
    const unsigned threads = tile->block.threads_x * tile->block.ffts_per_block;
    EXPECT_EQ(threads % 32, 0u);
    EXPECT_LE(threads, 1024u);
    EXPECT_EQ(fused::find_block_launcher(tile->kind, n0, n1, n2), tile);
    EXPECT_NE(tile->launch, nullptr);
    EXPECT_NE(tile->block.prepare, nullptr);
    // Every compiled c64 tile of at most 4096 values has its c128 kernel too.
    if (!f64 && values <= 4096) {
      EXPECT_NE(fused::find_block_launcher(fused::FusedKind::c2c_f64, n0, n1, n2), nullptr);
    }
  }
  EXPECT_EQ(fused::find_block_launcher(fused::FusedKind::c2c_f32, 1, 48, 48), nullptr);
  EXPECT_EQ(fused::find_block_launcher(fused::FusedKind::r2c_f32, 1, 64, 64), nullptr);
#else
  GTEST_SKIP() << "this build has no MathDx (CUPLAN_HAS_FUSED_FFT is 0): no fused kernels to list";
#endif
}

}  // namespace
