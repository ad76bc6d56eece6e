// SPDX-License-Identifier: Apache-2.0
// The fused convolution kernels a MathDx build holds, without a GPU: every compiled length has its row kernels (1D:
// c64, c128, real f32, real f64) and its column kernels (2D and 3D: c64, and c128 up to 8192), and each column
// kernel's launch shape keeps the limits its route relies on (one FFT per column of the tile, at most 1024 threads,
// the tile within 128 KiB of columns, shared memory within sm_90's 227 KiB per block).

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

}  // namespace
