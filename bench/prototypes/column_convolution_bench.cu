// SPDX-License-Identifier: Apache-2.0
// Prototype, not a library route: the 2D circular convolution of c64 [8192, n1] with a full-size filter, its outer
// axis (the columns, stride n1) fused. cuFFT transforms the contiguous rows (its fastest case) and one cuFFTDx
// kernel per column does the forward FFT along axis 0, the product with the filter's spectrum and the inverse FFT,
// reading and writing each column once. Against it: raw cuFFT's 2D forward + a product kernel + 2D inverse, and
// the library's two routes (separate; fused, which fuses the innermost axis and leaves the strided columns to
// cuFFT). It answers whether a column kernel of cuplan's own pays before it becomes a route: its loads are one
// complex per column and row, so a warp reads 32 sectors of which it uses 8 (or 16) bytes; the neighbouring columns'
// blocks, launched at the same time, read the rest of each sector, through L2 if it keeps them.
// GPU time (CUDA events), median of 21 runs after 3 warm-up runs, random data, less the operand copy each run starts
// with (timed alone). Every variant's result is compared with raw cuFFT's (relative L2 difference); a difference
// above 1e-4 ends the run with exit code 1.
// Usage: column_convolution_bench [--quick]   (--quick: [8192, 1024] instead of [8192, 8192], 5 runs)

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
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

constexpr unsigned kColumnLength = 8192;
constexpr int kWarmup = 3;

/// One column per FFT of the block (threadIdx.y), `FFTsPerBlock` neighbouring columns per block: element i of the
/// column at data[i * ld + column]. In place: a block reads its columns whole before it writes them.
template <class FFTF, class FFTI>
__launch_bounds__(FFTF::max_threads_per_block) __global__
    void convolve_columns(float2* data, const float2* spectrum, long long ld, long long columns) {
  using complex_type = typename FFTF::value_type;
  extern __shared__ __align__(alignof(float4)) unsigned char column_shared[];
  const long long column = static_cast<long long>(blockIdx.x) * FFTF::ffts_per_block + threadIdx.y;
  const bool active = column < columns;
  auto* values = reinterpret_cast<complex_type*>(data);
  const auto* filter = reinterpret_cast<const complex_type*>(spectrum);
  complex_type thread_data[FFTF::storage_size];
#pragma unroll
  for (unsigned i = 0; i < FFTF::elements_per_thread; ++i) {
    const long long index = i * FFTF::stride + threadIdx.x;
    thread_data[i] = active ? values[index * ld + column] : complex_type{0, 0};
  }
  auto* shared = reinterpret_cast<complex_type*>(column_shared);
  FFTF().execute(thread_data, shared);
#pragma unroll
  for (unsigned i = 0; i < FFTF::elements_per_thread; ++i) {
    const long long index = i * FFTF::stride + threadIdx.x;
    const complex_type h = active ? filter[index * ld + column] : complex_type{0, 0};
    const complex_type x = thread_data[i];
    thread_data[i] = complex_type{x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
  }
  __syncthreads();  // every thread is done with the forward FFT's shared memory before the inverse writes it
  FFTI().execute(thread_data, shared);
  if (!active) return;
#pragma unroll
  for (unsigned i = 0; i < FFTI::elements_per_thread; ++i) {
    const long long index = i * FFTI::stride + threadIdx.x;
    values[index * ld + column] = thread_data[i];
  }
}

template <unsigned Ept, unsigned Columns>
struct ColumnPair {
  using Base = decltype(cufftdx::Block() + cufftdx::Size<kColumnLength>() + cufftdx::Type<cufftdx::fft_type::c2c>() +
                        cufftdx::Precision<float>() + cufftdx::SM<900>() + cufftdx::ElementsPerThread<Ept>() +
                        cufftdx::FFTsPerBlock<Columns>());
  using Forward = decltype(Base() + cufftdx::Direction<cufftdx::fft_direction::forward>());
  using Inverse = decltype(Base() + cufftdx::Direction<cufftdx::fft_direction::inverse>());
  static constexpr unsigned shared_bytes = Forward::shared_memory_size > Inverse::shared_memory_size
                                               ? Forward::shared_memory_size
                                               : Inverse::shared_memory_size;
  static void launch(float2* data, const float2* spectrum, long long columns, cudaStream_t stream) {
    const auto kernel = &convolve_columns<Forward, Inverse>;
    BENCH_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
    const auto blocks = static_cast<unsigned>((columns + Columns - 1) / Columns);
    kernel<<<blocks, Forward::block_dim, shared_bytes, stream>>>(data, spectrum, columns, columns);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }
  static std::string name() {
    return std::to_string(Ept) + " per thread, " + std::to_string(Columns) + " column(s) of " +
           std::to_string(Forward::block_dim.x) + " threads per block";
  }
};

__global__ void multiply(float2* spectra, const float2* filter, long long total) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float2 x = spectra[i], h = filter[i];
    spectra[i] = {x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
  }
}

__global__ void scale(float2* values, long long total, float factor) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    values[i] = {values[i].x * factor, values[i].y * factor};
}

int failures = 0;

/// Every time is printed less the operand's copy that each timed run starts with (`copy_ms`, timed alone).
double copy_ms = 0;

void report(const char* what, double ms, double raw_ms, double difference) {
  std::printf("  %-58s %8.3f ms  raw sep./this %5.2fx  |this - raw| %.1e\n", what, ms - copy_ms,
              (raw_ms - copy_ms) / (ms - copy_ms), difference);
  if (!(difference < 1e-4)) {
    std::printf("  ^ differs from raw cuFFT\n");
    ++failures;
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!prototype::gpu_present()) return 0;
  const long long n0 = kColumnLength, n1 = quick ? 1024 : 8192, total = n0 * n1;
  const int reps = quick ? 5 : 21;
  const auto bytes = static_cast<std::size_t>(total) * sizeof(float2);
  cp::Stream s;
  const cudaStream_t stream = s.native();
  float2 *x = nullptr, *spectrum = nullptr, *work = nullptr, *reference = nullptr;
  for (float2** p : {&x, &spectrum, &work, &reference}) BENCH_CUDA_CHECK(cudaMalloc(p, bytes));
  {
    const auto hx = prototype::random_c64(static_cast<std::size_t>(total), 11);
    BENCH_CUDA_CHECK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
    const auto hk = prototype::random_c64(static_cast<std::size_t>(total), 12);
    BENCH_CUDA_CHECK(cudaMemcpy(spectrum, hk.data(), bytes, cudaMemcpyHostToDevice));
  }
  // The filter's 2D spectrum, with the 1/(n0 n1) of the unnormalized inverse folded in.
  cufftHandle plan2d = 0, rows = 0;
  BENCH_CUFFT_CHECK(cufftPlan2d(&plan2d, static_cast<int>(n0), static_cast<int>(n1), CUFFT_C2C));
  BENCH_CUFFT_CHECK(cufftSetStream(plan2d, stream));
  BENCH_CUFFT_CHECK(cufftExecC2C(plan2d, spectrum, spectrum, CUFFT_FORWARD));
  scale<<<1024, 256, 0, stream>>>(spectrum, total, 1.0f / static_cast<float>(total));
  BENCH_CUDA_CHECK(cudaGetLastError());
  int row_length = static_cast<int>(n1);
  BENCH_CUFFT_CHECK(cufftPlanMany(&rows, 1, &row_length, nullptr, 1, row_length, nullptr, 1, row_length, CUFFT_C2C,
                                  static_cast<int>(n0)));
  BENCH_CUFFT_CHECK(cufftSetStream(rows, stream));

  const auto fresh = [&](float2* into) {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(into, x, bytes, cudaMemcpyDeviceToDevice, stream));
  };
  // Each timed run transforms a fresh copy, so every row times the copy too; it is timed alone and taken off.
  copy_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { fresh(work); });
  const double raw_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
    fresh(reference);
    BENCH_CUFFT_CHECK(cufftExecC2C(plan2d, reference, reference, CUFFT_FORWARD));
    multiply<<<4096, 256, 0, stream>>>(reference, spectrum, total);
    BENCH_CUFFT_CHECK(cufftExecC2C(plan2d, reference, reference, CUFFT_INVERSE));
  });
  const double rows_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
    fresh(work);
    BENCH_CUFFT_CHECK(cufftExecC2C(rows, work, work, CUFFT_FORWARD));
  });
  std::printf("c64 2D [%lld, %lld], full-size filter; times less the operand's copy (%.3f ms) each run starts with\n",
              n0, n1, copy_ms);
  std::printf("  %-58s %8.3f ms\n", "raw cuFFT 2D forward + product + 2D inverse", raw_ms - copy_ms);
  std::printf("  %-58s %8.3f ms\n", "raw cuFFT row forward alone (axis 1)", rows_ms - copy_ms);

  const auto prototype = [&]<class Pair>(Pair) {
    const double ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
      fresh(work);
      BENCH_CUFFT_CHECK(cufftExecC2C(rows, work, work, CUFFT_FORWARD));
      Pair::launch(work, spectrum, n1, stream);
      BENCH_CUFFT_CHECK(cufftExecC2C(rows, work, work, CUFFT_INVERSE));
    });
    const double column_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
      fresh(work);
      Pair::launch(work, spectrum, n1, stream);
    });
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    // The last timed run was the column kernel alone: run the whole convolution once more for the comparison.
    fresh(work);
    BENCH_CUFFT_CHECK(cufftExecC2C(rows, work, work, CUFFT_FORWARD));
    Pair::launch(work, spectrum, n1, stream);
    BENCH_CUFFT_CHECK(cufftExecC2C(rows, work, work, CUFFT_INVERSE));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    report(("rows by cuFFT, columns fused: " + Pair::name()).c_str(), ms, raw_ms,
           prototype::relative_difference(work, reference, static_cast<std::size_t>(total)));
    std::printf("  %-58s %8.3f ms\n", "  its column kernel alone", column_ms - copy_ms);
  };
  prototype(ColumnPair<32, 1>{});
  prototype(ColumnPair<32, 2>{});
  prototype(ColumnPair<16, 1>{});
  prototype(ColumnPair<16, 2>{});
  prototype(ColumnPair<8, 1>{});

  // The library's routes on the same operand and filter (its spectrum computed at plan, outside the timing).
  {
    const cp::Shape shape{n0, n1};
    cp::Tensor tx = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
    cp::Tensor tk = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
    cp::copy(cp::TensorView(reinterpret_cast<std::complex<float>*>(x), shape, std::nullopt, cp::Device::cuda(0)),
             tx.view(), s);
    const auto hk = prototype::random_c64(static_cast<std::size_t>(total), 12);
    cp::copy(cp::TensorView(hk.data(), shape), tk.view(), s);
    s.synchronize();
    for (const auto route : {cp::ConvolutionRoute::separate, cp::ConvolutionRoute::fused}) {
      const char* what = route == cp::ConvolutionRoute::separate ? "cuplan Convolution, route separate"
                                                                 : "cuplan Convolution, route fused (innermost axis)";
      try {
        cp::Convolution conv(tx, tk, {.mode = cp::ConvolutionMode::circular, .route = route, .stream = s});
        conv.plan();
        cp::Tensor out = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
        const double ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
          fresh(work);  // the same copy as every other row
          conv.execute({.out = out.view()});
        });
        s.synchronize();
        report(what, ms, raw_ms,
               prototype::relative_difference(out.data(), reference, static_cast<std::size_t>(total)));
      } catch (const cp::NotSupported& e) {  // a build without the fused kernel of this length
        std::printf("  %-58s %s\n", what, e.what());
      }
    }
  }
  BENCH_CUFFT_CHECK(cufftDestroy(plan2d));
  BENCH_CUFFT_CHECK(cufftDestroy(rows));
  for (float2* p : {x, spectrum, work, reference}) BENCH_CUDA_CHECK(cudaFree(p));
  return failures == 0 ? 0 : 1;
}
