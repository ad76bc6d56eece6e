// SPDX-License-Identifier: Apache-2.0
// Your own device memory: a counting resource serves every device allocation cuplan makes.
//
//   1. A CallbackResource wraps two callables; here they count and forward to cudaMallocAsync / cudaFreeAsync.
//      An RMM resource plugs in the same way:
//        cp::CallbackResource([&mr](std::size_t n, cudaStream_t s) { return mr.allocate_async(n, s); },
//                             [&mr](void* p, std::size_t n, cudaStream_t s) { mr.deallocate_async(p, n, s); });
//   2. memory::set_resource makes it serve device 0; tensors, FFT workspaces and results all come from it.
//   3. Once everything is gone, every allocation was given back, and memory::stats agrees.
#include <atomic>
#include <complex>
#include <cstdio>
#include <memory>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

int main() {
  sample::require_gpu("memory_resource");
  try {
    std::atomic<long> allocations{0}, frees{0}, live_bytes{0};
    auto counting = std::make_shared<cp::CallbackResource>(
        [&](std::size_t bytes, cudaStream_t stream) -> void* {
          void* ptr = nullptr;
          if (cudaMallocAsync(&ptr, bytes, stream) != cudaSuccess) return nullptr;  // cuplan throws OutOfMemory
          ++allocations;
          live_bytes += static_cast<long>(bytes);
          return ptr;
        },
        [&](void* ptr, std::size_t bytes, cudaStream_t stream) {
          ++frees;
          live_bytes -= static_cast<long>(bytes);
          (void)cudaFreeAsync(ptr, stream);  // ordered after the last use on `stream`
        });
    cp::memory::set_resource(cp::Device::cuda(0), counting);
    {
      cp::Stream stream(cp::Device::cuda(0));
      std::vector<std::complex<float>> host(256 * 128, {1.0f, 0.0f});
      cp::Tensor x = cp::Tensor::wrap(cp::TensorView(host.data(), {256, 128})).to(cp::Device::cuda(0), stream);
      cp::Tensor y = cp::fft(x, {.axes = {1}, .stream = stream});
      cp::Tensor back = y.to(cp::Device::cpu(), stream);
      stream.synchronize();
      // A constant row transforms to N at frequency 0 and zeros elsewhere.
      const auto* out = back.data<std::complex<float>>();
      sample::check(std::abs(out[0] - std::complex<float>(128.0f, 0.0f)) < 1e-3f, "fft through the user resource");
      std::printf("live: %ld allocations, %ld bytes (cuplan counts %zu bytes)\n", allocations.load() - frees.load(),
                  live_bytes.load(), cp::memory::stats(cp::Device::cuda(0)).bytes_in_use);
    }
    cp::memory::set_resource(cp::Device::cuda(0), nullptr);  // back to cuplan's pool
    (void)cudaDeviceSynchronize();
    std::printf("%ld allocations, %ld frees\n", allocations.load(), frees.load());
    sample::check(allocations.load() > 0 && allocations.load() == frees.load() && live_bytes.load() == 0,
                  "every allocation given back to the resource");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memory_resource: %s\n", e.what());
    return 1;
  }
  return 0;
}
