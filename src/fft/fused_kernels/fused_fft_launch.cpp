// SPDX-License-Identifier: Apache-2.0
// Loading a compiled fused FFT program on a device and launching its kernels (see fused_fft_kernel.hpp).

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <utility>

#include "base/cuda_check.hpp"
#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "fft/fused_kernels/fused_fft_kernel.hpp"

namespace cuplan::detail::fused_fft {
namespace {

struct LoadedCache {
  std::mutex mutex;
  // Loaded programs stay loaded for the process: a plan's kernels may still run when it is freed, and the set is
  // bounded by the distinct programs the process plans.
  std::map<std::pair<std::string, int>, std::shared_ptr<const LoadedKernel>> entries;
  std::map<std::string, cudaLibrary_t> libraries;
};
LoadedCache& loaded_cache() {
  static auto* instance = new LoadedCache;
  return *instance;
}

// The kernel named cuplan_fused_fft_<direction> and the geometry its program recorded next to it; an empty entry
// for a kernel the program does not hold (R2C programs have no inverse kernel, C2R ones no forward kernel), which is
// not looked up: a lookup of an absent name would be a CUDA error.
LoadedKernel::Entry entry(cudaLibrary_t library, FFTType type, Direction d, int device) {
  LoadedKernel::Entry e;
  if (!program_holds(type, d)) return e;
  const char* direction = d == Direction::forward ? "forward" : "inverse";
  cudaKernel_t kernel = nullptr;
  const std::string name = fmt::format("cuplan_fused_fft_{}", direction);
  CUPLAN_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, name.c_str()));
  void* config = nullptr;
  std::size_t bytes = 0;
  const std::string config_name = fmt::format("cuplan_fused_config_{}", direction);
  CUPLAN_CUDA_CHECK(cudaLibraryGetGlobal(&config, &bytes, library, config_name.c_str()));
  unsigned values[4] = {};
  if (bytes != sizeof values)
    throw LibraryError(
        "CUDA runtime", "cudaLibraryGetGlobal", 0, "cudaSuccess",
        fmt::format("FFT: fused kernel: {} holds {} bytes, expected {}", config_name, bytes, sizeof values));
  CUPLAN_CUDA_CHECK(cudaMemcpy(values, config, sizeof values, cudaMemcpyDeviceToHost));
  e.kernel = reinterpret_cast<const void*>(kernel);
  e.threads_x = values[0];
  e.threads_y = values[1];
  e.ffts_per_block = values[2];
  e.shared_bytes = values[3];
  CUPLAN_CUDA_CHECK(cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    static_cast<int>(e.shared_bytes), device));
  return e;
}

}  // namespace

std::shared_ptr<const LoadedKernel> LoadedKernel::load(const std::shared_ptr<const CompiledKernel>& compiled,
                                                       int device) {
  LoadedCache& cache = loaded_cache();
  const std::lock_guard lock(cache.mutex);
  const auto key = std::pair(compiled->key, device);
  if (const auto it = cache.entries.find(key); it != cache.entries.end()) return it->second;
  const DeviceScope scope(Device::cuda(device));
  cudaLibrary_t& library = cache.libraries[compiled->key];
  if (library == nullptr)
    CUPLAN_CUDA_CHECK(cudaLibraryLoadData(&library, compiled->cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  auto loaded = std::make_shared<LoadedKernel>();
  loaded->forward = entry(library, compiled->type, Direction::forward, device);
  loaded->inverse = entry(library, compiled->type, Direction::inverse, device);
  cache.entries.emplace(key, loaded);
  return loaded;
}

void LoadedKernel::launch(Direction direction, const FusedFftRows& rows, cudaStream_t stream) const {
  const Entry& e = direction == Direction::forward ? forward : inverse;
  if (e.kernel == nullptr)
    throw InvalidArgument(fmt::format("FFT: the fused kernel has no {} transform",
                                      direction == Direction::forward ? "forward" : "inverse"));
  if (rows.rows == 0) return;
  const long long per_block = e.ffts_per_block;
  const long long blocks = (rows.rows + per_block - 1) / per_block;
  if (blocks > 0x7fffffffLL)
    throw NotSupported(
        fmt::format("FFT: the fused kernel launches {} blocks of {} rows, more than 2^31 - 1", blocks, per_block));
  FusedFftRows arguments = rows;
  void* parameters[] = {&arguments};
  CUPLAN_CUDA_CHECK(cudaLaunchKernel(e.kernel, dim3(static_cast<unsigned>(blocks)), dim3(e.threads_x, e.threads_y),
                                     parameters, e.shared_bytes, stream));
}

}  // namespace cuplan::detail::fused_fft
