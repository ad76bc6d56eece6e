// SPDX-License-Identifier: Apache-2.0
// A user memory resource serves every device allocation cuplan makes (tensors, FFT and Matmul workspaces, staging
// of host operands, internal copies): a counting resource sees each allocation freed exactly once with its size,
// cuplan's own pool hands out nothing meanwhile, and a free waits for the last stream that used the memory.

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using testing::HostGate;

// Allocates with cudaMallocAsync from the device's default CUDA pool (not cuplan's) and records every call.
struct Counter {
  struct Live {
    std::size_t bytes;
    cudaStream_t stream;
  };
  std::mutex mutex;
  std::map<void*, Live> live;
  std::size_t allocations = 0, deallocations = 0, mismatched = 0;
  std::vector<void*> freed_while_stream_busy;  // the free's stream still had work queued (a held use)

  std::shared_ptr<MemoryResource> resource() {
    return std::make_shared<CallbackResource>(
        [this](std::size_t bytes, cudaStream_t stream) -> void* {
          void* ptr = nullptr;
          if (cudaMallocAsync(&ptr, bytes, stream) != cudaSuccess) return nullptr;
          std::lock_guard lock(mutex);
          ++allocations;
          live[ptr] = {bytes, stream};
          return ptr;
        },
        [this](void* ptr, std::size_t bytes, cudaStream_t stream) {
          {
            std::lock_guard lock(mutex);
            ++deallocations;
            auto it = live.find(ptr);
            if (it == live.end() || it->second.bytes != bytes || it->second.stream != stream) ++mismatched;
            if (it != live.end()) live.erase(it);
            if (cudaStreamQuery(stream) == cudaErrorNotReady) freed_while_stream_busy.push_back(ptr);
          }
          CUPLAN_TEST_CUDA(cudaFreeAsync(ptr, stream));
        });
  }
};

std::uint64_t default_pool_attribute(cudaMemPoolAttr attribute) {
  auto pool = std::dynamic_pointer_cast<PoolResource>(memory::default_resource(Device::cuda(0)));
  std::uint64_t value = 0;
  CUPLAN_TEST_CUDA(cudaMemPoolGetAttribute(pool->pool(), attribute, &value));
  return value;
}

void reset_default_pool_high() {
  auto pool = std::dynamic_pointer_cast<PoolResource>(memory::default_resource(Device::cuda(0)));
  std::uint64_t zero = 0;  // the high-water mark restarts at the current use
  CUPLAN_TEST_CUDA(cudaMemPoolSetAttribute(pool->pool(), cudaMemPoolAttrUsedMemHigh, &zero));
}

// Restores the default resource however the test ends.
struct ResourceScope {
  explicit ResourceScope(std::shared_ptr<MemoryResource> r) { memory::set_resource(Device::cuda(0), std::move(r)); }
  ~ResourceScope() { memory::set_resource(Device::cuda(0), nullptr); }
};

// The default resource lives until the process ends: device allocations take it without a reference count, and what
// get_resource and default_resource return counts references as any shared_ptr does (a weak_ptr to it stays valid).
TEST(MemoryResource, TheDefaultResourceCountsReferencesAndOutlivesEveryCopy) {
  CUPLAN_REQUIRE_GPU();
  std::weak_ptr<MemoryResource> weak;
  const MemoryResource* raw = nullptr;
  {
    const std::shared_ptr<MemoryResource> resource = memory::default_resource(Device::cuda(0));
    ASSERT_NE(resource, nullptr);
    EXPECT_GE(resource.use_count(), 2);  // the library's and this one
    EXPECT_EQ(memory::get_resource(Device::cuda(0)), resource);
    weak = resource;
    raw = resource.get();
  }
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(weak.lock().get(), raw);
  Stream s(Device::cuda(0));
  const std::size_t allocations_before = memory::stats(Device::cuda(0)).allocations;
  {
    Tensor t = Tensor::empty({1024}, f32, Device::cuda(0), s);
    EXPECT_NE(t.data(), nullptr);
  }
  s.synchronize();
  EXPECT_EQ(memory::stats(Device::cuda(0)).allocations, allocations_before + 1);
  EXPECT_EQ(memory::default_resource(Device::cuda(0)).get(), raw);
}

TEST(MemoryResource, EveryDeviceAllocationGoesThroughTheUserResource) {
  CUPLAN_REQUIRE_GPU();
  Counter counter;
  Stream s1(Device::cuda(0));
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_NE(std::dynamic_pointer_cast<PoolResource>(memory::default_resource(Device::cuda(0))), nullptr);
  reset_default_pool_high();
  const std::uint64_t pool_used_before = default_pool_attribute(cudaMemPoolAttrUsedMemCurrent);
  const std::size_t in_use_before = memory::stats(Device::cuda(0)).bytes_in_use;
  {
    ResourceScope scope(counter.resource());
    // Tensors and copies (host to device, device to device, strided device copy through a temporary).
    auto host = testing::random_vector<std::complex<float>>(64 * 48);
    Tensor x = Tensor::wrap(TensorView(host.data(), {64, 48})).to(Device::cuda(0), s1);
    Tensor y = Tensor::empty_strided({64, 48}, column_major_strides({64, 48}), c64, Device::cuda(0), s1);
    copy(x, y, s1);
    // FFT on a device operand (workspace, result) and on a host operand (staging within a small limit).
    Tensor fx = fft(x, {.axes = {1}, .stream = s1});
    FFT staged(TensorView(host.data(), {64, 48}),
               {.axes = {1}, .execution = Execution::cuda(), .stream = s1, .device_memory_limit = 16 * 1024});
    staged.plan();
    Tensor fh = staged.execute();
    // Matmul on device operands (workspace, result) and on host operands (staged rows).
    auto ha = testing::random_vector<float>(96 * 80);
    auto hb = testing::random_vector<float>(80 * 72);
    Tensor a = Tensor::wrap(TensorView(ha.data(), {96, 80})).to(Device::cuda(0), s1);
    Tensor b = Tensor::wrap(TensorView(hb.data(), {80, 72})).to(Device::cuda(0), s1);
    Tensor d = matmul(a, b, {.stream = s1});
    Matmul host_mm(TensorView(ha.data(), {96, 80}), TensorView(hb.data(), {80, 72}),
                   {.execution = Execution::cuda(),
                    .stream = s1,
                    .memory_limit = std::size_t{1} << 20,  // workspace, so that a small limit still holds B
                    .device_memory_limit = 80 * 72 * 4 + (std::size_t{1} << 20) + 64 * 1024});
    host_mm.plan();
    Tensor dh = host_mm.execute();
    s1.synchronize();
    EXPECT_GT(counter.allocations, 6u) << "expected tensors, workspaces and staging buffers through the resource";
    EXPECT_EQ(memory::stats(Device::cuda(0)).bytes_in_use - in_use_before, [&] {
      std::size_t sum = 0;
      for (auto& [p, l] : counter.live) sum += l.bytes;
      return sum;
    }()) << "cuplan's count of live bytes differs from the resource's";
  }
  // The function forms' cached plans keep their workspaces (allocated through the resource) until they go, and their
  // stream's shared work area (the function forms' default) stays until released or its Stream goes.
  plan_cache::clear();
  memory::release_work_areas(Device::cuda(0));
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(counter.deallocations, counter.allocations) << "leaked through the resource";
  EXPECT_TRUE(counter.live.empty());
  EXPECT_EQ(counter.mismatched, 0u) << "a free with another size or stream than its allocation";
  EXPECT_EQ(default_pool_attribute(cudaMemPoolAttrUsedMemHigh), pool_used_before)
      << "cuplan's own pool allocated while a user resource was set";
  EXPECT_EQ(memory::stats(Device::cuda(0)).bytes_in_use, in_use_before);
}

TEST(MemoryResource, FreeWaitsForTheLastUseOnAnotherStream) {
  CUPLAN_REQUIRE_GPU();
  Counter counter;
  HostGate gate;
  Stream s1(Device::cuda(0)), s2(Device::cuda(0));
  void* ptr = nullptr;
  {
    ResourceScope scope(counter.resource());
    Tensor x = Tensor::empty({4096}, c64, Device::cuda(0), s1);
    // Written once so that the transforms read defined values (the test is about the free, not the values).
    CUPLAN_TEST_CUDA(cudaMemsetAsync(x.data(), 0, 4096 * sizeof(std::complex<float>), s1.native()));
    ptr = x.data();
    // The plan first: making a cuFFT plan may wait for work on the device, which would wait for the gate below.
    (void)fft(x, {.stream = s2});
    s2.synchronize();
    s1.synchronize();
    gate.hold(s2.native());
    Tensor fx = fft(x, {.stream = s2});  // a use on s2, queued behind the held kernel
    (void)fx;
  }  // x and fx die here while s2 is still held
  gate.open();
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_FALSE(gate.timed_out());
  bool found = false;
  for (void* p : counter.freed_while_stream_busy) found = found || p == ptr;
  EXPECT_TRUE(found) << "the operand was freed on a stream that did not wait for its use on s2";
  EXPECT_EQ(counter.deallocations, counter.allocations);
}

TEST(MemoryResource, PoolResourceOverACallersPoolAndStats) {
  CUPLAN_REQUIRE_GPU();
  cudaMemPool_t pool = nullptr;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CUPLAN_TEST_CUDA(cudaMemPoolCreate(&pool, &props));
  {
    ResourceScope scope(std::make_shared<PoolResource>(pool));
    memory::reset_peak(Device::cuda(0));
    const auto before = memory::stats(Device::cuda(0));
    {
      Tensor t = Tensor::empty({1 << 20}, f32, Device::cuda(0));
      std::uint64_t used = 0;
      CUPLAN_TEST_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
      EXPECT_GE(used, std::uint64_t{4} << 20);
      EXPECT_EQ(memory::stats(Device::cuda(0)).bytes_in_use - before.bytes_in_use, std::size_t{4} << 20);
    }
    const auto after = memory::stats(Device::cuda(0));
    EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
    EXPECT_GE(after.peak_bytes, before.bytes_in_use + (std::size_t{4} << 20));
    memory::reset_peak(Device::cuda(0));
    EXPECT_EQ(memory::stats(Device::cuda(0)).peak_bytes, after.bytes_in_use);
  }
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  CUPLAN_TEST_CUDA(cudaMemPoolDestroy(pool));
}

TEST(MemoryResource, TrimAndReleaseThresholdOfTheDefaultPool) {
  CUPLAN_REQUIRE_GPU();
  { Tensor t = Tensor::empty({8 << 20}, f32, Device::cuda(0)); }
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_GE(memory::stats(Device::cuda(0)).pool_reserved, std::size_t{32} << 20) << "the pool keeps what is freed";
  memory::trim();
  EXPECT_LT(memory::stats(Device::cuda(0)).pool_reserved, std::size_t{32} << 20) << "trim gave nothing back";
  memory::set_release_threshold(Device::cuda(0), 0);
  { Tensor t = Tensor::empty({8 << 20}, f32, Device::cuda(0)); }
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_LT(memory::stats(Device::cuda(0)).pool_reserved, std::size_t{32} << 20) << "threshold 0 kept the memory";
  memory::set_release_threshold(Device::cuda(0), UINT64_MAX);
}

TEST(MemoryResource, AllocationFailureIsOutOfMemoryNamingTheSize) {
  CUPLAN_REQUIRE_GPU();
  ResourceScope scope(std::make_shared<CallbackResource>([](std::size_t, cudaStream_t) -> void* { return nullptr; },
                                                         [](void*, std::size_t, cudaStream_t) {}));
  try {
    (void)Tensor::empty({1000}, f32, Device::cuda(0));
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("4000 bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cuplan
