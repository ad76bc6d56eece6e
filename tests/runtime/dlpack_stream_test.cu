// SPDX-License-Identifier: Apache-2.0
// The DLPack stream handshake on the GPU: a producer stream held busy, an export (or import) for a consumer stream,
// and a kernel on the consumer that must see the producer's final values; the host never waits in between.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using namespace dlpack;  // DLPack's names, as cuplan declares them (cuplan/dlpack.hpp)

constexpr std::int64_t n = 1 << 16;

// Spins, then writes i + 1 to every element: a consumer that runs early sees the zeros written before.
__global__ void spin_then_fill(int* out, std::int64_t count, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<int>(i + 1);
}

__global__ void copy_ints(const int* in, int* out, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

const int* element_zero(const DLTensor& dl) {
  return reinterpret_cast<const int*>(static_cast<const char*>(dl.data) + dl.byte_offset);
}

// Reads `source` on `consumer` into a fresh buffer and returns the values on the host.
std::vector<int> read_on(const Stream& consumer, const int* source) {
  Tensor out = Tensor::empty({n}, i32, Device::cuda(0), consumer);
  copy_ints<<<64, 256, 0, consumer>>>(source, out.data<int>(), n);
  CUPLAN_TEST_CUDA(cudaGetLastError());
  std::vector<int> host(n);
  CUPLAN_TEST_CUDA(cudaMemcpyAsync(host.data(), out.data(), n * sizeof(int), cudaMemcpyDeviceToHost, consumer));
  consumer.synchronize();
  return host;
}

int count_wrong(const std::vector<int>& values) {
  int wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += values[static_cast<std::size_t>(i)] != static_cast<int>(i + 1);
  return wrong;
}

// Launches the kernels once so that lazy module loading cannot serialise the streams in the measured part.
void warm_up() {
  Stream s;
  Tensor t = Tensor::empty({n}, i32, Device::cuda(0), s);
  spin_then_fill<<<1, 32, 0, s>>>(t.data<int>(), n, 1);
  copy_ints<<<1, 32, 0, s>>>(t.data<int>(), t.data<int>(), n);
  CUPLAN_TEST_CUDA(cudaGetLastError());
  s.synchronize();
}

class DLPackStreams : public ::testing::TestWithParam<bool> {};

// Parameter: the producer stream named in DLPackExchange (true) or found from the tensor's recorded uses (false).
TEST_P(DLPackStreams, ExportOrdersTheConsumerAfterABusyProducer) {
  CUPLAN_REQUIRE_GPU();
  warm_up();
  const bool named = GetParam();
  Stream allocator, producer, consumer;
  Tensor t = Tensor::empty({n}, i32, Device::cuda(0), allocator);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(t.data(), 0, n * sizeof(int), allocator));
  producer.wait(allocator);
  spin_then_fill<<<64, 256, 0, producer>>>(t.data<int>(), n, testing::cycles_for_ms(200));
  CUPLAN_TEST_CUDA(cudaGetLastError());
  t.record_stream(producer);  // the documented way to tell cuplan about a kernel of one's own

  DLManagedTensor* managed =
      named ? t.to_dlpack({.stream = consumer, .producer = producer}) : t.to_dlpack({.stream = consumer});
  EXPECT_FALSE(producer.done()) << "the export must not wait on the host";
  EXPECT_EQ(managed->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(managed->dl_tensor.device.device_id, 0);
  t = Tensor();  // the managed tensor alone keeps the memory alive now
  EXPECT_EQ(count_wrong(read_on(consumer, element_zero(managed->dl_tensor))), 0);
  managed->deleter(managed);
}

INSTANTIATE_TEST_SUITE_P(Producer, DLPackStreams, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? std::string("Named") : std::string("RecordedUses");
                         });

int g_deleter_calls = 0;

TEST(DLPackStreams, ImportMakesTheConsumerWaitForTheProducer) {
  CUPLAN_REQUIRE_GPU();
  warm_up();
  Stream producer, consumer;
  int* memory = nullptr;
  CUPLAN_TEST_CUDA(cudaMalloc(reinterpret_cast<void**>(&memory), n * sizeof(int)));
  CUPLAN_TEST_CUDA(cudaMemset(memory, 0, n * sizeof(int)));
  spin_then_fill<<<64, 256, 0, producer>>>(memory, n, testing::cycles_for_ms(200));
  CUPLAN_TEST_CUDA(cudaGetLastError());

  // A managed tensor made by "another library": it frees its memory in its deleter.
  static std::int64_t shape[1] = {n};
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = memory;
  managed->dl_tensor.device = {kDLCUDA, 0};
  managed->dl_tensor.ndim = 1;
  managed->dl_tensor.dtype = {kDLInt, 32, 1};
  managed->dl_tensor.shape = shape;
  managed->manager_ctx = memory;
  managed->deleter = [](DLManagedTensor* self) {
    ++g_deleter_calls;
    (void)cudaFree(self->manager_ctx);
    delete self;
  };
  g_deleter_calls = 0;
  {
    Tensor imported = Tensor::from_dlpack(managed, {.stream = consumer, .producer = producer});
    EXPECT_FALSE(producer.done()) << "the import must not wait on the host";
    EXPECT_EQ(imported.device(), Device::cuda(0));
    EXPECT_EQ(imported.memory_space(), MemorySpace::device);
    EXPECT_EQ(count_wrong(read_on(consumer, imported.data<int>())), 0);
    EXPECT_EQ(g_deleter_calls, 0);
  }
  EXPECT_EQ(g_deleter_calls, 1);
}

TEST(DLPackStreams, PinnedAndDeviceTensorsExportTheirDeviceTypes) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  const Tensor pinned = Tensor::empty({8}, f32, Device::cpu(), {}, HostMemory::pinned);
  DLManagedTensor* managed = pinned.to_dlpack();
  EXPECT_EQ(managed->dl_tensor.device.device_type, kDLCUDAHost);
  const Tensor pinned_back = Tensor::from_dlpack(managed);
  EXPECT_EQ(pinned_back.memory_space(), MemorySpace::host_pinned);

  const Tensor device = Tensor::empty({8}, c128, Device::cuda(0), s);
  managed = device.to_dlpack({.stream = s});
  EXPECT_EQ(managed->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(managed->dl_tensor.dtype.code, kDLComplex);
  EXPECT_EQ(managed->dl_tensor.dtype.bits, 128);
  const Tensor device_back = Tensor::from_dlpack(managed, {.stream = s});
  EXPECT_EQ(device_back.data(), device.data());
  EXPECT_EQ(device_back.allocation_stream(), StreamRef(s));
}

}  // namespace
}  // namespace cuplan
