// SPDX-License-Identifier: Apache-2.0
// Prototype, not a library route: the 2D circular convolution of c64 [n0, n1] with a full-size filter, its
// innermost axis fused and its first axis left to cuFFT. cuFFT transforms the first axis (a strided batch: stride n1,
// distance 1) out of place into a work buffer, the library's 1D fused convolution (one cuFFTDx kernel per row:
// forward FFT, product with the row's filter spectrum, inverse FFT) runs along the rows, and cuFFT transforms the first
// axis back. Against it: the library's separate and column routes on the same operands. It answers whether the rows
// kernel, now within 1.2x-1.8x of a plain transform, pays where the column kernel fills an SM with one block.
// The filter of the rows is the first-axis transform of the 2D filter, divided by n0, so that the three steps give
// the 2D circular convolution; the result is compared with the separate route's (relative L2 difference, exit code 1
// above 1e-4). GPU time (CUDA events), median of 21 runs after 3 warm-up runs, random data.
// Usage: row_first_2d_bench [--quick]   (--quick: [8192, 1024] alone, 5 runs)

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "prototypes/prototype_support.hpp"
#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;

namespace {

constexpr int kWarmup = 3;

__global__ void scale_c64(float2* data, long long count, float factor) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    data[i] = float2{data[i].x * factor, data[i].y * factor};
}

double difference(const cp::Tensor& got, const cp::Tensor& want) {
  return prototype::relative_difference(got.data(), want.data(), static_cast<std::size_t>(got.numel()));
}

bool row(long long n0, long long n1, int reps, cp::StreamRef s) {
  const cudaStream_t stream = s.native();
  const cp::Shape shape{n0, n1};
  const std::size_t count = static_cast<std::size_t>(n0 * n1);
  cp::Tensor x = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor k = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  {
    const auto hx = prototype::random_c64(count, 5);
    const auto hk = prototype::random_c64(count, 6);
    cp::copy(cp::TensorView(hx.data(), shape), x.view(), s);
    cp::copy(cp::TensorView(hk.data(), shape), k.view(), s);
    s.synchronize();
  }
  const cp::ConvolutionOptions circular{.mode = cp::ConvolutionMode::circular, .stream = s};

  cp::ConvolutionOptions separate_options = circular;
  separate_options.route = cp::ConvolutionRoute::separate;
  cp::Convolution separate(x, k, separate_options);
  separate.plan();
  cp::Tensor want = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  const double separate_ms =
      bench::gpu_median_ms(stream, kWarmup, reps, [&] { separate.execute({.out = want.view()}); });
  separate.free();

  double columns_ms = 0;
  std::string columns_note;
  try {
    cp::ConvolutionOptions fused_options = circular;
    fused_options.route = cp::ConvolutionRoute::fused;
    cp::Convolution columns(x, k, fused_options);
    columns.plan();
    cp::Tensor out = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
    columns_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { columns.execute({.out = out.view()}); });
  } catch (const cp::NotSupported& e) {
    columns_note = e.what();
  }

  // cuFFT along the first axis: n0 points n1 apart, n1 transforms one element apart.
  cufftHandle first_axis;
  int length = static_cast<int>(n0);
  int embed = static_cast<int>(n0);
  BENCH_CUFFT_CHECK(cufftPlanMany(&first_axis, 1, &length, &embed, static_cast<int>(n1), 1, &embed,
                                  static_cast<int>(n1), 1, CUFFT_C2C, static_cast<int>(n1)));
  BENCH_CUFFT_CHECK(cufftSetStream(first_axis, stream));
  const auto transform = [&](const cp::Tensor& from, cp::Tensor& to, int direction) {
    BENCH_CUFFT_CHECK(cufftExecC2C(first_axis, static_cast<cufftComplex*>(const_cast<void*>(from.data())),
                                   static_cast<cufftComplex*>(to.data()), direction));
  };

  // The rows' filter: the first-axis transform of the 2D filter over n0.
  cp::Tensor row_filter = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  transform(k, row_filter, CUFFT_FORWARD);
  scale_c64<<<1024, 256, 0, stream>>>(static_cast<float2*>(row_filter.data()), static_cast<long long>(count),
                                      1.0f / static_cast<float>(n0));
  BENCH_CUDA_CHECK(cudaGetLastError());
  cp::Tensor work = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  cp::ConvolutionOptions rows_options = circular;
  rows_options.axes = {1};
  rows_options.route = cp::ConvolutionRoute::fused;
  double rows_ms = 0, first_ms = 0, row_first_ms = 0, row_first_difference = 0;
  std::string rows_note;
  try {
    cp::Convolution rows(work, row_filter, rows_options);
    rows.plan();
    cp::Tensor out = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
    const auto three_steps = [&] {
      transform(x, work, CUFFT_FORWARD);
      rows.execute({.out = work.view()});
      transform(work, out, CUFFT_INVERSE);
    };
    first_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { transform(x, work, CUFFT_FORWARD); });
    rows_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { rows.execute({.out = out.view()}); });
    row_first_ms = bench::gpu_median_ms(stream, kWarmup, reps, three_steps);
    s.synchronize();
    row_first_difference = difference(out, want);
  } catch (const cp::NotSupported& e) {
    rows_note = e.what();
  }
  BENCH_CUFFT_CHECK(cufftDestroy(first_axis));

  std::printf("c64 [%lld, %lld] full-size filter: separate %8.3f ms; column route ", n0, n1, separate_ms);
  if (columns_note.empty())
    std::printf("%8.3f ms (%.2fx)", columns_ms, separate_ms / columns_ms);
  else
    std::printf("not run (%s)", columns_note.c_str());
  if (!rows_note.empty()) {
    std::printf("; rows: not run (%s)\n", rows_note.c_str());
    return true;
  }
  std::printf("; row-first %8.3f ms (%.2fx) = first axis %.3f x 2 + rows %.3f; |row-first - separate| %.1e\n",
              row_first_ms, separate_ms / row_first_ms, first_ms, rows_ms, row_first_difference);
  std::fflush(stdout);
  return row_first_difference <= 1e-4;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: row_first_2d_bench [--quick] (got '%s')\n", argv[i]);
      return 2;
    }
  }
  if (!prototype::gpu_present()) return 0;
  cp::Stream stream(cp::Device::cuda(0));
  const int reps = quick ? 5 : 21;
  bool ok = true;
  if (quick) {
    ok = row(8192, 1024, reps, stream) && ok;
  } else {
    ok = row(8192, 8192, reps, stream) && ok;
    ok = row(4096, 16384, reps, stream) && ok;
    ok = row(16384, 4096, reps, stream) && ok;
    ok = row(16384, 8192, reps, stream) && ok;
    ok = row(4096, 4096, reps, stream) && ok;
  }
  return ok ? 0 : 1;
}
