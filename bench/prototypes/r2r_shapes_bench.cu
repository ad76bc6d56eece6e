// SPDX-License-Identifier: Apache-2.0
// Prototype, not a route: the block shape of the fused real-to-real kernels (docs/r2r.md, "Route choice"). The
// library's own DCT-II and DCT-III kernels (src/r2r/cufft/fused_r2r_kernel.cuh, f32, cuFFTDx's folded real mode) are
// instantiated here with every number of elements per thread cuFFTDx accepts, and at two of them with two FFTs per
// block, and timed over f32 [4096, 16384] and [16384, 4096] along axis 1, against cuplan's rfft of the same shape (the
// ratio issue 37 bounds at 1.5x) and the library's own fused call. The launch arguments are built as the CUDA
// backend builds them (the planner's decision, the algorithm, the edge factors and the scale), so the variant with
// the library's block shape runs the library's kernel; every variant's result is compared with the library's
// (relative L2 difference; above 1e-5 the run ends with exit code 1).
// GPU time (CUDA events), median of 21 runs after 3 warm-up runs, random data. Linked with the internal library.
// Usage: r2r_shapes_bench [--quick]   (--quick: 1/16 of the rows, 5 runs)

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cufftdx.hpp>
#include <random>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "prototypes/prototype_support.hpp"
#include "r2r/algorithms.hpp"
#include "r2r/cufft/fused_r2r_kernel.cuh"
#include "r2r/planner.hpp"
#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;
namespace cd = cuplan::detail;
namespace fr = cuplan::detail::fused_r2r;

namespace {

constexpr int kWarmup = 3;
int failures = 0;

/// The library's description (fused_r2r_length.cu.in) with the block shape given: `Ept` elements per thread and
/// `Ffts` FFTs per block (0: cuFFTDx's suggestion for that number). `MinBlocks` above 1 (C2R only): the kernel's
/// straight-line loads within the registers that many blocks per SM leave (fused_r2r_c2r).
template <unsigned L, cufftdx::fft_type Type, unsigned Ept, unsigned Ffts, unsigned MinBlocks = 1>
struct Shape {
  static_assert(MinBlocks == 1 || Type == cufftdx::fft_type::c2r, "MinBlocks is a knob of the C2R kernel");
  static constexpr auto direction =
      Type == cufftdx::fft_type::r2c ? cufftdx::fft_direction::forward : cufftdx::fft_direction::inverse;
  using Base = decltype(cufftdx::Block() + cufftdx::Size<L>() + cufftdx::Type<Type>() + cufftdx::Precision<float>() +
                        cufftdx::Direction<direction>() + cufftdx::SM<900>() +
                        cufftdx::RealFFTOptions<cufftdx::complex_layout::natural, cufftdx::real_mode::folded>() +
                        cufftdx::ElementsPerThread<Ept>());
  using FFT = decltype(Base() + cufftdx::FFTsPerBlock<(Ffts == 0 ? Base::suggested_ffts_per_block : Ffts)>());

  static auto kernel() {
    if constexpr (Type == cufftdx::fft_type::r2c)
      return &fr::fused_r2r_r2c<FFT, true, cd::R2RAlgorithm::type2_reorder>;
    else if constexpr (MinBlocks > 1)
      return &fr::fused_r2r_c2r_min_blocks<FFT, true, MinBlocks>;
    else
      return &fr::fused_r2r_c2r<FFT, true>;
  }
  static void launch(const fr::FusedR2RArgs& args, cudaStream_t stream) {
    BENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(FFT::shared_memory_size)));
    const auto blocks = static_cast<unsigned>((args.rows.rows + FFT::ffts_per_block - 1) / FFT::ffts_per_block);
    kernel()<<<blocks, FFT::block_dim, FFT::shared_memory_size, stream>>>(args);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }
  static std::string name() {
    std::string text = std::to_string(Ept) + " per thread, " + std::to_string(FFT::ffts_per_block) + " FFT(s) of " +
                       std::to_string(FFT::block_dim.x) + " threads per block";
    if constexpr (MinBlocks > 1) text += ", " + std::to_string(MinBlocks) + " blocks/SM, straight-line loads";
    return text;
  }
};

/// The launch arguments the CUDA backend builds for one axis (cufft_r2r.cpp), here for axis 1 of a row-major
/// [rows, n] operand, out of place.
fr::FusedR2RArgs args_for(cp::R2RKind kind, std::int64_t rows, std::int64_t n, const void* src, void* dst) {
  const cd::R2RRequest request{.dtype = cp::f32,
                               .shape = {rows, n},
                               .strides = {n, 1},
                               .axes = {1},
                               .kinds = {kind},
                               .norm = cp::R2RNorm::backward,
                               .orthogonalize = std::nullopt,
                               .inplace = false,
                               .all_axes_by_default = false,
                               .axes_option = "axis"};
  const cd::R2RDecision d = cd::plan_r2r(request, "r2r_shapes_bench");
  const cd::EdgeScaling edges = d.edges(0, cp::Direction::forward);
  cd::R2RRows row_walk;
  row_walk.rows = rows;
  row_walk.dims = 1;
  row_walk.digit[0] = {rows, n, n};
  return {.algorithm = cd::choose_algorithm(d.kind_for(0, cp::Direction::forward), n),
          .rows = row_walk,
          .src = src,
          .dst = dst,
          .pre_first = edges.pre_first,
          .pre_last = edges.pre_last,
          .post_first = edges.post_first,
          .post_last = edges.post_last,
          .scale = d.scale(cp::Direction::forward)};
}

double relative_difference(const cp::Tensor& got, const cp::Tensor& want) {
  const cp::Tensor a = got.to(cp::Device::cpu()), b = want.to(cp::Device::cpu());
  const auto* x = static_cast<const float*>(a.data());
  const auto* y = static_cast<const float*>(b.data());
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    num += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    den += double(y[i]) * y[i];
  }
  return std::sqrt(num / den);
}

template <class... Shapes>
void kind_rows(cp::R2RKind kind, int type, std::int64_t rows, std::int64_t n, int reps, cp::StreamRef s) {
  const cudaStream_t stream = s.native();
  cp::Tensor x = cp::Tensor::empty({rows, n}, cp::f32, cp::Device::cuda(0), s);
  {
    std::mt19937_64 rng(static_cast<unsigned>(n) + static_cast<unsigned>(type));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> h(static_cast<std::size_t>(rows * n));
    for (float& v : h) v = u(rng);
    cp::copy(cp::TensorView(h.data(), {rows, n}), x.view(), s);
    s.synchronize();
  }
  cp::Tensor spectrum = cp::Tensor::empty({rows, n / 2 + 1}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor library = cp::Tensor::empty({rows, n}, cp::f32, cp::Device::cuda(0), s);
  cp::Tensor y = cp::Tensor::empty({rows, n}, cp::f32, cp::Device::cuda(0), s);
  const cp::FFTOptions rfft_options{.axes = {1}, .stream = s};
  const double rfft_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { cp::rfft(x, spectrum, rfft_options); });
  const cp::R2ROptions options{.type = type, .axis = 1, .stream = s, .route = cp::FFTRoute::fused};
  const double library_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { cp::dct(x, library, options); });
  s.synchronize();
  std::printf("DCT-%s f32 [%lld, %lld] axis 1, out of place\n", type == 2 ? "II" : "III", static_cast<long long>(rows),
              static_cast<long long>(n));
  std::printf("  %-50s %8.3f ms\n", "cuplan rfft", rfft_ms);
  std::printf("  %-50s %8.3f ms  /rfft %5.2fx\n", "cuplan dct, route fused (the library's shape)", library_ms,
              library_ms / rfft_ms);
  const fr::FusedR2RArgs args = args_for(kind, rows, n, x.data(), y.data());
  const auto variant = [&]<class S>(S) {
    BENCH_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xff, static_cast<std::size_t>(rows * n) * sizeof(float), stream));
    const double ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { S::launch(args, stream); });
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    const double difference = relative_difference(y, library);
    std::printf("  %-50s %8.3f ms  /rfft %5.2fx  |this - library| %.1e\n", S::name().c_str(), ms, ms / rfft_ms,
                difference);
    if (!(difference < 1e-5)) {
      std::printf("  ^ differs from the library's result\n");
      ++failures;
    }
    std::fflush(stdout);
  };
  (variant(Shapes{}), ...);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!prototype::gpu_present()) return 0;
  const int reps = quick ? 5 : 21;
  const std::int64_t scale = quick ? 16 : 1;
  cp::Stream s;
  using R2C = std::integral_constant<cufftdx::fft_type, cufftdx::fft_type::r2c>;
  using C2R = std::integral_constant<cufftdx::fft_type, cufftdx::fft_type::c2r>;
  // Elements per thread cuFFTDx 1.5 (MathDx 25.6) accepts for folded f32 on sm_90: 16, 32, 64 at 16384 (it suggests
  // 64; the library takes 32) and 4 to 64 at 4096 (it suggests 32, as the library does).
  kind_rows<Shape<16384, R2C::value, 16, 0>, Shape<16384, R2C::value, 32, 0>, Shape<16384, R2C::value, 64, 0>>(
      cp::R2RKind::dct2, 2, 4096 / scale, 16384, reps, s);
  // At 32 per thread the library keeps a test per load (its straight-line form took 92 registers, one block of 512
  // threads per SM); the variant with 2 blocks per SM asks for that form within 64 registers (ptxas: 52 bytes of
  // spill).
  kind_rows<Shape<16384, C2R::value, 16, 0>, Shape<16384, C2R::value, 32, 0>, Shape<16384, C2R::value, 32, 0, 2>,
            Shape<16384, C2R::value, 64, 0>>(cp::R2RKind::dct3, 3, 4096 / scale, 16384, reps, s);
  kind_rows<Shape<4096, R2C::value, 8, 0>, Shape<4096, R2C::value, 16, 0>, Shape<4096, R2C::value, 16, 2>,
            Shape<4096, R2C::value, 32, 0>, Shape<4096, R2C::value, 32, 2>, Shape<4096, R2C::value, 64, 0>>(
      cp::R2RKind::dct2, 2, 16384 / scale, 4096, reps, s);
  kind_rows<Shape<4096, C2R::value, 8, 0>, Shape<4096, C2R::value, 16, 0>, Shape<4096, C2R::value, 16, 2>,
            Shape<4096, C2R::value, 32, 0>, Shape<4096, C2R::value, 32, 2>, Shape<4096, C2R::value, 64, 0>>(
      cp::R2RKind::dct3, 3, 16384 / scale, 4096, reps, s);
  return failures == 0 ? 0 : 1;
}
