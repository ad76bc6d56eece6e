// SPDX-License-Identifier: Apache-2.0
// The C++ side of a PyTorch or CuPy extension (docs/interop-pytorch-cupy.md): a function that takes a tensor as
// DLPack hands it over (a DLManagedTensorVersioned, from `x.__dlpack__(stream=...)`) and the caller's CUDA stream
// as a raw cudaStream_t (`torch.cuda.current_stream().cuda_stream`, `cupy.cuda.get_current_stream().ptr`), runs an
// FFT on that stream and hands the result back the same way (`torch.from_dlpack` / `cupy.from_dlpack`).
//
// No Python here: main() plays the framework. It builds the managed tensor as PyTorch does (its own memory, shape
// array and deleter), passes its stream, reads the result on that stream, and checks the values against a DFT in
// double and that both deleters ran exactly once. Without a GPU the same function runs on a host tensor (kDLCPU),
// which has no stream, as for a CPU tensor of PyTorch. A CPU-only build of cuplan (CUPLAN_HAS_CUDA 0) leaves out
// the framework's CUDA calls: there is no GPU to use.

#include <cuplan/config.hpp>
#if CUPLAN_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <optional>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;
namespace dl = cuplan::dlpack;
using C = std::complex<float>;

// ---- The extension function: what a pybind11 / nanobind / torch extension would bind. ----

// FFT along the last axis of `input`, on `stream` (ignored for host memory). Takes ownership of `input` (DLPack:
// the consumer calls its deleter, here through the Tensor once the FFT that reads it is done) and returns a new
// managed tensor that the caller owns. PyTorch's __dlpack__(stream=s) has already ordered s after the producer's
// work, so the import needs no producer stream; the export orders the caller's stream after the FFT.
dl::DLManagedTensorVersioned* fft_last_axis(dl::DLManagedTensorVersioned* input, cudaStream_t stream) {
  const bool on_device = input->dl_tensor.device.device_type == dl::kDLCUDA;
  const std::optional<cp::StreamRef> on = on_device ? std::optional<cp::StreamRef>(stream) : std::nullopt;
  const cp::Tensor x = cp::Tensor::from_dlpack(input, {.stream = on});
  const cp::Tensor y = cp::fft(x, {.axes = {-1}, .stream = on});  // enqueued on the caller's stream
  return y.to_dlpack_versioned({.stream = on});
}

// ---- main(): the framework's side, written in C++. ----

namespace {

// The framework's own CUDA calls: allocation, copies, its stream.
#if CUPLAN_HAS_CUDA
bool device_alloc(void** data, std::size_t bytes) {
  return cudaMalloc(data, bytes) == cudaSuccess;
}
void device_free(void* data) {
  (void)cudaFree(data);
}
bool copy_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s) == cudaSuccess;
}
bool synchronize(cudaStream_t s) {
  return cudaStreamSynchronize(s) == cudaSuccess;
}
bool make_stream(cudaStream_t* s) {
  return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking) == cudaSuccess;
}
void destroy_stream(cudaStream_t s) {
  (void)cudaStreamDestroy(s);
}
#else  // no GPU in a CPU-only build: main() never takes the device path
bool device_alloc(void**, std::size_t) {
  return false;
}
void device_free(void*) {}
bool copy_async(void*, const void*, std::size_t, cudaStream_t) {
  return false;
}
bool synchronize(cudaStream_t) {
  return false;
}
bool make_stream(cudaStream_t*) {
  return false;
}
void destroy_stream(cudaStream_t) {}
#endif

constexpr std::int64_t kRows = 16, kCols = 96;

// What the framework keeps alive for an exported tensor: its memory, the shape array, and a count of deleter calls.
struct ProducerState {
  void* data = nullptr;
  bool device = false;
  std::int64_t shape[2] = {kRows, kCols};
  int deleted = 0;
};

void producer_deleter(dl::DLManagedTensorVersioned* self) {
  auto* state = static_cast<ProducerState*>(self->manager_ctx);
  if (state->device)
    device_free(state->data);
  else
    delete[] static_cast<C*>(state->data);
  ++state->deleted;
  delete self;
}

// As torch.Tensor.__dlpack__ builds it: version 1.x, the framework's memory, row-major (strides may be null).
dl::DLManagedTensorVersioned* export_like_a_framework(ProducerState& state, const std::vector<C>& values,
                                                      cudaStream_t stream) {
  const std::size_t bytes = values.size() * sizeof(C);
  if (state.device) {
    if (!device_alloc(&state.data, bytes) || !copy_async(state.data, values.data(), bytes, stream)) return nullptr;
  } else {
    state.data = new C[values.size()];
    std::copy(values.begin(), values.end(), static_cast<C*>(state.data));
  }
  auto* managed = new dl::DLManagedTensorVersioned{};
  managed->version = {1, 1};
  managed->manager_ctx = &state;
  managed->deleter = producer_deleter;
  managed->flags = 0;
  managed->dl_tensor = {
      state.data, {state.device ? dl::kDLCUDA : dl::kDLCPU, 0}, 2, {dl::kDLComplex, 64, 1}, state.shape, nullptr, 0};
  return managed;
}

double max_error_against_dft(const C* got, const std::vector<C>& x) {
  double worst = 0, largest = 0;
  for (std::int64_t r = 0; r < kRows; ++r)
    for (std::int64_t k = 0; k < kCols; ++k) {
      std::complex<double> want{};
      for (std::int64_t j = 0; j < kCols; ++j)
        want += std::complex<double>(x[static_cast<std::size_t>(r * kCols + j)]) *
                std::polar(1.0, -2.0 * std::numbers::pi * double(j * k) / double(kCols));
      worst = std::max(worst, std::abs(std::complex<double>(got[r * kCols + k]) - want));
      largest = std::max(largest, std::abs(want));
    }
  return worst / largest;
}

}  // namespace

int main() {
  const bool gpu = sample::device("dlpack_interop").is_cuda();
  try {
    std::vector<C> values(static_cast<std::size_t>(kRows * kCols));
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = C(std::sin(0.37f * static_cast<float>(i)), std::cos(0.11f * static_cast<float>(i * i % 97)));

    // The framework's stream (a torch.cuda.Stream / cupy.cuda.Stream), made outside cuplan.
    cudaStream_t framework_stream = nullptr;
    if (gpu && !make_stream(&framework_stream)) return 1;
    ProducerState state;
    state.device = gpu;
    dl::DLManagedTensorVersioned* input = export_like_a_framework(state, values, framework_stream);
    sample::check(input != nullptr, "the framework exported its tensor");

    dl::DLManagedTensorVersioned* output = fft_last_axis(input, framework_stream);

    // The framework reads the result on its own stream (ordered after the FFT by the export).
    const dl::DLTensor& out = output->dl_tensor;
    sample::check(out.ndim == 2 && out.shape[0] == kRows && out.shape[1] == kCols, "result shape is {16, 96}");
    sample::check(out.dtype.code == dl::kDLComplex && out.dtype.bits == 64, "result dtype is complex64");
    sample::check(out.device.device_type == (gpu ? dl::kDLCUDA : dl::kDLCPU), "result lives where the input did");
    std::vector<C> result(values.size());
    const void* first = static_cast<const char*>(out.data) + out.byte_offset;
    if (gpu) {
      if (!copy_async(result.data(), first, result.size() * sizeof(C), framework_stream) ||
          !synchronize(framework_stream))
        return 1;
    } else {
      std::copy(static_cast<const C*>(first), static_cast<const C*>(first) + result.size(), result.begin());
    }
    const double error = max_error_against_dft(result.data(), values);
    std::printf("FFT of a %lldx%lld complex64 tensor handed over by DLPack: relative error %.3g\n",
                static_cast<long long>(kRows), static_cast<long long>(kCols), error);
    sample::check(error < 1e-5, "the result matches a DFT in double");

    output->deleter(output);  // the framework drops its result tensor
    if (gpu && !synchronize(framework_stream)) return 1;
    sample::check(state.deleted == 1, "the input's deleter ran exactly once, after the FFT that read it");
    if (gpu) destroy_stream(framework_stream);
    return 0;
  } catch (const cp::Error& e) {
    return sample::report_error(e);
  }
}
