// SPDX-License-Identifier: Apache-2.0
// Prototype, not a route: the block shape of the convolution's column kernel (docs/convolution.md, "The column
// route"). The library's kernel (src/convolution/cuda/fused_columns.cuh, c64) is instantiated here with other numbers
// of columns per block and elements per thread, and timed alone over the work buffers of the two rows the route is
// measured on: 2D [8192, 8192] (the first axis, length 8192, over 8192 columns) and 3D 512³ (length 512 over 512²
// columns). The first variant of each row is the library's shape; at 8192 it is the library's own launcher (the split
// route's three passes), timed over the 4097 columns of the real 2D row's half spectrum too. Each variant gets the
// spectrum tiled for its own columns per block (the library's tile_column_spectrum_device), runs once on the same data,
// and its result is compared with the library's (relative L2 difference; above 1e-5 the run ends with exit code 1);
// then it is timed.
// GPU time (CUDA events), median of 21 runs after 3 warm-up runs, random data. Linked with the internal library.
// Usage: column_shapes_bench [--quick]   (--quick: 1/16 of the columns, 5 runs)

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cufftdx.hpp>
#include <string>
#include <vector>

#include "convolution/cuda/convolution_kernels.hpp"
#include "convolution/cuda/fused_columns.cuh"
#include "prototypes/prototype_support.hpp"
#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"

namespace cd = cuplan::detail;
namespace fd = cuplan::detail::fused;

namespace {

constexpr int kWarmup = 3;
int failures = 0;

/// The library's description (fused_columns_length.cu.in) with the block shape given: `Columns` columns per block,
/// `Ept` elements per thread.
template <unsigned L, unsigned Columns, unsigned Ept>
struct Shape {
  template <cufftdx::fft_direction D>
  using Description = decltype(cufftdx::Block() + cufftdx::Size<L>() + cufftdx::Type<cufftdx::fft_type::c2c>() +
                               cufftdx::Precision<float>() + cufftdx::Direction<D>() + cufftdx::SM<900>() +
                               cufftdx::ElementsPerThread<Ept>() + cufftdx::FFTsPerBlock<Columns>());
  using Forward = Description<cufftdx::fft_direction::forward>;
  using Inverse = Description<cufftdx::fft_direction::inverse>;
  static constexpr unsigned columns = Columns;
  static constexpr int split = 1;
  static constexpr unsigned tile_bytes = L * fd::column_tile_pitch(Columns) * 8;
  static constexpr unsigned shared_bytes =
      tile_bytes > Forward::shared_memory_size ? tile_bytes : Forward::shared_memory_size;

  static void launch(const fd::FusedColumns& cols, cudaStream_t stream) {
    const auto kernel = &fd::fused_convolve_columns<Forward, Inverse, Columns>;
    BENCH_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
    const auto blocks = static_cast<unsigned>(cols.entries * ((cols.columns + Columns - 1) / Columns));
    kernel<<<blocks, Forward::block_dim, shared_bytes, stream>>>(cols);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }
  static std::string name() {
    return std::to_string(Columns) + " column(s) of " + std::to_string(Forward::block_dim.x) + " threads (" +
           std::to_string(Ept) + " per thread), " + std::to_string(shared_bytes / 1024) + " KiB";
  }
};

/// The library's own launcher of length L (fused_columns_length.cu.in): at 8192 the split route's three passes.
template <unsigned L>
struct Library {
  static inline const fd::FusedColumnLauncher* const launcher = fd::find_column_launcher(fd::FusedKind::c2c_f32, L);
  static inline const unsigned columns = launcher != nullptr ? launcher->columns_per_block : 1;
  static inline const int split = launcher != nullptr ? launcher->split : 1;
  static void launch(const fd::FusedColumns& cols, cudaStream_t stream) {
    BENCH_CUDA_CHECK(launcher->block.prepare());
    BENCH_CUDA_CHECK(launcher->launch(cols, stream));
  }
  static std::string name() {
    return "the library's launcher: " +
           (split > 1 ? "split, " + std::to_string(L / split) + " x " + std::to_string(split)
                      : std::string("one kernel")) +
           ", " + std::to_string(columns) + " columns a block";
  }
};

/// One row: the work buffer [length, columns] c64 and a spectrum of the same size, random; each shape in turn.
template <unsigned L, class... Shapes>
void row(const char* what, long long columns, int reps, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(L) * static_cast<std::size_t>(columns);
  const std::size_t bytes = count * 8;
  std::vector<std::complex<float>> spectrum_host = prototype::random_c64(count, 2);
  for (auto& v : spectrum_host) v /= static_cast<float>(L);  // the library's 1/N: values stay in range over runs
  const std::vector<std::complex<float>> data_host = prototype::random_c64(count, 1);
  void *data = nullptr, *pristine = nullptr, *natural = nullptr, *tiled = nullptr, *reference = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&data, bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&pristine, bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&natural, bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&tiled, bytes + static_cast<std::size_t>(L) * 16 * 8));  // a partial group's padding
  BENCH_CUDA_CHECK(cudaMalloc(&reference, bytes));
  BENCH_CUDA_CHECK(cudaMemcpy(pristine, data_host.data(), bytes, cudaMemcpyHostToDevice));
  BENCH_CUDA_CHECK(cudaMemcpy(natural, spectrum_host.data(), bytes, cudaMemcpyHostToDevice));
  std::printf("%s: c64 column kernel, length %u over %lld columns\n", what, L, columns);
  bool first = true;
  const auto variant = [&]<class S>(S) {
    BENCH_CUDA_CHECK(
        cd::tile_column_spectrum_device(natural, tiled, cuplan::c64, 1, L, columns, S::columns, S::split, stream));
    fd::FusedColumns cols;
    cols.data = data;
    cols.spectrum = tiled;
    cols.entries = 1;
    cols.columns = columns;
    BENCH_CUDA_CHECK(cudaMemcpyAsync(data, pristine, bytes, cudaMemcpyDeviceToDevice, stream));
    S::launch(cols, stream);
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    double difference = 0;
    if (first)
      BENCH_CUDA_CHECK(cudaMemcpy(reference, data, bytes, cudaMemcpyDeviceToDevice));
    else
      difference = prototype::relative_difference(data, reference, count);
    const double ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { S::launch(cols, stream); });
    std::printf("  %-52s %8.3f ms  %6.0f GB/s  |this - library| %.1e%s\n", S::name().c_str(), ms,
                2.0 * static_cast<double>(bytes) / ms / 1e6, difference, first ? "  (the library's shape)" : "");
    if (!(difference < 1e-5)) {
      std::printf("  ^ differs from the library shape's result\n");
      ++failures;
    }
    first = false;
    std::fflush(stdout);
  };
  (variant(Shapes{}), ...);
  for (void* p : {data, pristine, natural, tiled, reference}) BENCH_CUDA_CHECK(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!prototype::gpu_present()) return 0;
  const int reps = quick ? 5 : 21;
  const long long scale = quick ? 16 : 1;
  cudaStream_t stream = nullptr;
  BENCH_CUDA_CHECK(cudaStreamCreate(&stream));
  // 2D: the library takes the split route (three passes of 64- and 128-point FFTs, 16 columns a block); before it,
  // one kernel of 2 columns of 512 threads (16 per thread; 128 KiB of tile, one block an SM), the second variant. The
  // real 2D row's half spectrum, 4097 columns, has row segments off the 128-byte boundaries.
  if (Library<8192>::launcher != nullptr) {
    row<8192, Library<8192>, Shape<8192, 2, 16>, Shape<8192, 2, 32>, Shape<8192, 1, 16>>("2D [8192, 8192]",
                                                                                         8192 / scale, reps, stream);
    row<8192, Library<8192>, Shape<8192, 2, 16>>("2D real [8192, 8192]'s half spectrum", 4097, reps, stream);
  }
  // A middle length, 2D [4096, 16384]: the library takes 4 columns of 256 threads (16 per thread; 160 KiB).
  row<4096, Shape<4096, 4, 16>, Shape<4096, 2, 16>, Shape<4096, 2, 8>, Shape<4096, 1, 8>>("2D [4096, 16384]",
                                                                                          16384 / scale, reps, stream);
  // 3D: the library takes 4 columns of 64 threads (8 per thread; 32-byte rows, several blocks an SM).
  row<512, Shape<512, 4, 8>, Shape<512, 16, 8>, Shape<512, 8, 8>, Shape<512, 8, 16>, Shape<512, 4, 16>,
      Shape<512, 4, 4>, Shape<512, 2, 8>, Shape<512, 2, 16>>("3D 512^3", 512LL * 512 / scale, reps, stream);
  BENCH_CUDA_CHECK(cudaStreamDestroy(stream));
  return failures == 0 ? 0 : 1;
}
