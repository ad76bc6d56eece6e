// SPDX-License-Identifier: Apache-2.0
// Prototype, not a library route: which block shape the fused FFT route (docs/fft.md, "Route choice") should give
// cuFFTDx for a C2C c64 forward transform with a scaling prolog, and whether the route's kernel, compiled by NVRTC
// at plan time, runs as fast as the same kernel compiled ahead of time. For each of [4096, 16384], [16384, 4096],
// [65536, 1024] and [262144, 256] along axis 1, out of place:
//   raw cuFFT        the plain forward transform (the bound the issue measures against: prolog/plain <= 1.10)
//   AOT, e per thread  a cuFFTDx kernel compiled here, the prolog's product inlined in its loads, for every number
//                    of elements per thread cuFFTDx accepts at that length (its suggested FFTs per block)
//   cuplan fused     FFT with a prolog given as CUDA source, route fused (the NVRTC kernel, cuFFTDx's suggested
//                    shape), and cuplan's plain FFT
// GPU time (CUDA events), median of 21 runs after 3 warm-up runs, random data; every result is compared with raw
// cuFFT's times the factor (relative L2 difference); one above 1e-5 ends the run with exit code 1.
// Usage: fused_fft_shapes_bench [--quick]   (--quick: 1/16 of the rows, 5 runs)

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cufftdx.hpp>
#include <random>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "prototypes/prototype_support.hpp"
#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;

namespace {

constexpr int kWarmup = 3;
constexpr float kFactor = 0.75f;

// The prolog the library's route inlines, as the user writes it (the (b) row of fft_callback_bench).
constexpr const char* kScaleSource = R"(
#include <cuplan/fft_callback_device.hpp>
__device__ float2 scale(void* in, unsigned long long offset, void* info, void*) {
  const float s = *cuplan::fft_callback::user_data<const float>(info);
  const float2 v = static_cast<const float2*>(in)[offset];
  return make_float2(v.x * s, v.y * s);
}
)";

template <class FFT>
__launch_bounds__(FFT::max_threads_per_block) __global__
    void scaled_rows(const float2* in, float2* out, long long rows, const float* factor) {
  using complex_type = typename FFT::value_type;
  constexpr unsigned n = cufftdx::size_of<FFT>::value;
  extern __shared__ __align__(alignof(float4)) unsigned char rows_shared[];
  const long long row = static_cast<long long>(blockIdx.x) * FFT::ffts_per_block + threadIdx.y;
  const bool active = row < rows;
  const float f = *factor;
  const auto* src = reinterpret_cast<const complex_type*>(in) + (active ? row * n : 0);
  complex_type thread_data[FFT::storage_size];
#pragma unroll
  for (unsigned i = 0; i < FFT::elements_per_thread; ++i) {
    const unsigned index = i * FFT::stride + threadIdx.x;
    const complex_type v = active ? src[index] : complex_type{0, 0};
    thread_data[i] = complex_type{v.x * f, v.y * f};
  }
  FFT().execute(thread_data, reinterpret_cast<complex_type*>(rows_shared));
  if (!active) return;
  auto* dst = reinterpret_cast<complex_type*>(out) + row * n;
#pragma unroll
  for (unsigned i = 0; i < FFT::elements_per_thread; ++i) dst[i * FFT::stride + threadIdx.x] = thread_data[i];
}

template <unsigned N, unsigned Ept>
struct RowShape {
  using Base = decltype(cufftdx::Block() + cufftdx::Size<N>() + cufftdx::Type<cufftdx::fft_type::c2c>() +
                        cufftdx::Precision<float>() + cufftdx::SM<900>() +
                        cufftdx::Direction<cufftdx::fft_direction::forward>() + cufftdx::ElementsPerThread<Ept>());
  using FFT = decltype(Base() + cufftdx::FFTsPerBlock<Base::suggested_ffts_per_block>());
  static void launch(const float2* in, float2* out, long long rows, const float* factor, cudaStream_t stream) {
    const auto kernel = &scaled_rows<FFT>;
    BENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(FFT::shared_memory_size)));
    const auto blocks = static_cast<unsigned>((rows + FFT::ffts_per_block - 1) / FFT::ffts_per_block);
    kernel<<<blocks, FFT::block_dim, FFT::shared_memory_size, stream>>>(in, out, rows, factor);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }
  static std::string name() {
    return "AOT, " + std::to_string(Ept) + " per thread, " + std::to_string(FFT::ffts_per_block) + " FFT(s) of " +
           std::to_string(FFT::block_dim.x) + " threads per block";
  }
};

int failures = 0;

void report(const std::string& what, double ms, double plain_ms, double difference) {
  std::printf("  %-62s %8.3f ms  this/raw plain %5.2fx  difference %.1e\n", what.c_str(), ms, ms / plain_ms,
              difference);
  if (!(difference < 1e-5)) {
    std::printf("  ^ differs from raw cuFFT\n");
    ++failures;
  }
  std::fflush(stdout);
}

template <unsigned N, unsigned... Epts>
void shape_rows(long long rows, int reps, cp::StreamRef s) {
  const cudaStream_t stream = s.native();
  const long long total = rows * N;
  const auto count = static_cast<std::size_t>(total);
  const cp::Shape shape{rows, static_cast<std::int64_t>(N)};
  cp::Tensor x = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor plain = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor y = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor factor = cp::Tensor::empty({1}, cp::f32, cp::Device::cuda(0), s);
  {
    const auto hx = prototype::random_c64(count, static_cast<unsigned>(N));
    cp::copy(cp::TensorView(hx.data(), shape), x.view(), s);
    const float f = kFactor;
    cp::copy(cp::TensorView(&f, {1}), factor.view(), s);
    s.synchronize();
  }
  std::printf("C2C c64 [%lld, %u] axis 1, scaling prolog, out of place\n", rows, N);
  cufftHandle handle = 0;
  int n = static_cast<int>(N);
  BENCH_CUFFT_CHECK(cufftPlanMany(&handle, 1, &n, nullptr, 1, n, nullptr, 1, n, CUFFT_C2C, static_cast<int>(rows)));
  BENCH_CUFFT_CHECK(cufftSetStream(handle, stream));
  auto* in = x.data<float2>();
  const double plain_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
    BENCH_CUFFT_CHECK(
        cufftExecC2C(handle, reinterpret_cast<cufftComplex*>(in), plain.data<cufftComplex>(), CUFFT_FORWARD));
  });
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  BENCH_CUFFT_CHECK(cufftDestroy(handle));
  std::printf("  %-62s %8.3f ms\n", "raw cuFFT forward, no prolog", plain_ms);
  const auto variant = [&]<unsigned Ept>(std::integral_constant<unsigned, Ept>) {
    using Shape = RowShape<N, Ept>;
    const double ms = bench::gpu_median_ms(
        stream, kWarmup, reps, [&] { Shape::launch(in, y.data<float2>(), rows, factor.data<float>(), stream); });
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    report(Shape::name(), ms, plain_ms, prototype::relative_difference(y.data(), plain.data(), count, kFactor));
  };
  (variant(std::integral_constant<unsigned, Epts>{}), ...);

  cp::FFT cuplan_plain(x, {.axes = {1}, .stream = s});
  cp::FFT cuplan_fused(x, {.axes = {1},
                           .stream = s,
                           .prolog = cp::FFTCallback::cuda_source(kScaleSource, "scale", factor.data()),
                           .route = cp::FFTRoute::fused});
  cuplan_plain.plan(s);
  cuplan_fused.plan(s);
  const double cuplan_plain_ms =
      bench::gpu_median_ms(stream, kWarmup, reps, [&] { cuplan_plain.execute({.stream = s, .out = y.view()}); });
  s.synchronize();
  report("cuplan FFT, no prolog", cuplan_plain_ms, plain_ms,
         prototype::relative_difference(y.data(), plain.data(), count));
  const double fused_ms =
      bench::gpu_median_ms(stream, kWarmup, reps, [&] { cuplan_fused.execute({.stream = s, .out = y.view()}); });
  s.synchronize();
  report("cuplan FFT with the prolog, route fused (NVRTC)", fused_ms, plain_ms,
         prototype::relative_difference(y.data(), plain.data(), count, kFactor));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!prototype::gpu_present()) return 0;
  const int reps = quick ? 5 : 21;
  const long long scale = quick ? 16 : 1;
  cp::Stream s;
  // The numbers of elements per thread cuFFTDx 1.5 (MathDx 25.6) accepts for c64 on sm_90; its suggestion is
  // 32, 16, 32 and 16 at these lengths.
  shape_rows<16384, 16, 32>(4096 / scale, reps, s);
  shape_rows<4096, 8, 16, 32>(16384 / scale, reps, s);
  shape_rows<1024, 8, 16, 32>(65536 / scale, reps, s);
  shape_rows<256, 4, 8, 16, 32>(262144 / scale, reps, s);
  return failures == 0 ? 0 : 1;
}
