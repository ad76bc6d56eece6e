// SPDX-License-Identifier: Apache-2.0
// The race between two streams, and its fix with an event instead of a full synchronize.
//
// A producer kernel on s1 writes `data`; a consumer kernel on s2 reads it. Work on two streams has no order unless
// you give it one, so the consumer may read `data` before the producer has written it.
//
//   1. The race, made visible: `data` starts filled with a sentinel, and the producer is slow on purpose: it waits
//      (up to a time limit) until the consumer has finished reading before it writes. If the GPU runs the two
//      streams side by side, as it may, the consumer reads sentinels every time. If the GPU happens to run them one
//      after the other, the producer's wait times out and nothing is seen; either outcome is reported, neither fails.
//   2. The fix: record an event on s1 after the producer and make s2 wait for it. The host never blocks in between
//      (no cudaDeviceSynchronize, no s1.synchronize()); only the GPU orders the consumer after the producer. The
//      consumer must then see every value the producer wrote, exactly.
//   3. Where cuplan calls are the producer and the consumer of a cuplan Tensor, cuplan makes that edge itself: a
//      Tensor written on s1 and read on s2, or on the host with no stream given, is read after the write.
#include <cstdint>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

constexpr float sentinel = -1.0f;

__device__ std::uint64_t now_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One block: thread 0 waits until *consumer_done is set or `max_wait_ns` has passed, then all threads write.
__global__ void slow_producer(float* data, std::int64_t n, const volatile int* consumer_done,
                              std::uint64_t max_wait_ns) {
  if (threadIdx.x == 0) {
    const std::uint64_t start = now_ns();
    while (*consumer_done == 0 && now_ns() - start < max_wait_ns) __nanosleep(1000);
  }
  __syncthreads();
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) data[i] = static_cast<float>(i);
}

// One block: copies `data` to `seen`, then tells the producer that it is done reading.
__global__ void consumer(const float* data, float* seen, std::int64_t n, int* consumer_done) {
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) seen[i] = data[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicExch(consumer_done, 1);
  }
}

// Fills data with the sentinel, clears the flag, and waits so that both halves start from the same state.
void reset(const cp::Tensor& data, const cp::Tensor& flag, const cp::Stream& s) {
  std::vector<float> sentinels(static_cast<std::size_t>(data.numel()), sentinel);
  int zero = 0;
  cp::copy(cp::TensorView(sentinels.data(), {data.numel()}), data, s);  // host memory: blocking
  cp::copy(cp::TensorView(&zero, {1}), flag, s);
}

std::int64_t count_sentinels(const cp::Tensor& seen, const cp::Stream& s, std::vector<float>& host) {
  cp::copy(seen, cp::TensorView(host.data(), {seen.numel()}), s);
  std::int64_t count = 0;
  for (float v : host) count += v == sentinel;
  return count;
}

int main() {
  sample::require_gpu("stream_race_fix");
  return sample::run("stream_race_fix", [] {
    constexpr std::int64_t n = 1 << 20;
    cp::Stream s1, s2;
    auto data = cp::Tensor::empty({n}, cp::f32, cp::Device::cuda(0), s1);
    auto seen = cp::Tensor::empty({n}, cp::f32, cp::Device::cuda(0), s1);
    auto flag = cp::Tensor::empty({1}, cp::i32, cp::Device::cuda(0), s1);
    // Our own kernels use these tensors on s2: record it, so their memory outlives that work (cuplan calls record
    // their streams themselves; raw kernels are the user's to declare).
    for (const cp::Tensor* t : {&data, &seen, &flag}) t->record_stream(s2);
    std::vector<float> host(n);

    // Load both kernels before the race: a kernel's first launch may load its code, and loading can wait for the
    // GPU to be idle, which would run the two streams one after the other (n = 0: only the flag is read, so it is
    // written first).
    reset(data, flag, s1);
    slow_producer<<<1, 32, 0, s1>>>(data.data<float>(), 0, flag.data<int>(), 0);
    consumer<<<1, 32, 0, s1>>>(data.data<float>(), seen.data<float>(), 0, flag.data<int>());
    sample::check(cudaGetLastError() == cudaSuccess, "kernels loaded");

    // 1. The race: nothing orders the consumer on s2 after the producer on s1.
    reset(data, flag, s1);
    slow_producer<<<1, 1024, 0, s1>>>(data.data<float>(), n, flag.data<int>(), 2'000'000'000ull);
    consumer<<<1, 1024, 0, s2>>>(data.data<float>(), seen.data<float>(), n, flag.data<int>());
    sample::check(cudaGetLastError() == cudaSuccess, "unordered producer and consumer launched");
    s1.synchronize();
    s2.synchronize();
    const std::int64_t unwritten = count_sentinels(seen, s1, host);
    if (unwritten > 0)
      std::printf("race: without ordering the consumer read %lld of %lld values before the producer wrote them\n",
                  static_cast<long long>(unwritten), static_cast<long long>(n));
    else
      std::printf("race: this GPU ran the two streams one after the other this time; the race stays possible\n");

    // 2. The fix: the consumer waits for an event recorded after the producer. The producer still waits for the
    // consumer's flag, which now cannot come first, so it runs until its (short) time limit: a slow producer.
    reset(data, flag, s1);
    slow_producer<<<1, 1024, 0, s1>>>(data.data<float>(), n, flag.data<int>(), 20'000'000ull);
    cp::Event produced = s1.record();
    s2.wait(produced);  // a GPU-side wait: the host goes on at once
    consumer<<<1, 1024, 0, s2>>>(data.data<float>(), seen.data<float>(), n, flag.data<int>());
    sample::check(cudaGetLastError() == cudaSuccess, "ordered producer and consumer launched");
    std::printf("fix: host free while the producer runs (producer done: %s)\n", produced.done() ? "yes" : "not yet");
    s2.synchronize();  // the only host wait: for the consumer, which itself came after the producer

    cp::copy(seen, cp::TensorView(host.data(), {n}), s2);
    bool exact = true;
    for (std::int64_t i = 0; i < n; ++i) exact = exact && host[i] == static_cast<float>(i);
    sample::check(exact, "with the event the consumer saw every value the producer wrote");

    // 3. cuplan's own Tensors need no event: a cuplan call that reads a Tensor waits, on the GPU, for the cuplan call
    // that wrote it, on whatever streams they run. Here a copy on s1 writes `copied` behind a slow kernel (it waits
    // out its time limit, writing nothing); a copy on s2 and a host read given no stream still see every value.
    auto copied = cp::Tensor::empty({n}, cp::f32, cp::Device::cuda(0), s1);
    int zero = 0;
    cp::copy(cp::TensorView(&zero, {1}), flag, s1);  // no consumer will set it: the slow kernel runs its full limit
    slow_producer<<<1, 32, 0, s1>>>(data.data<float>(), 0, flag.data<int>(), 200'000'000ull);  // 0.2 s of nothing
    sample::check(cudaGetLastError() == cudaSuccess, "slow kernel launched");
    cp::copy(seen, copied, s1);                                   // device to device: returns at once
    const cp::Tensor on_s2 = copied.to(cp::Device::cuda(0), s2);  // cuplan orders s2 after the copy on s1
    const bool held = !s1.done();
    const cp::Tensor on_host = copied.to(cp::Device::cpu());  // no stream: the current one, ordered the same way
    cp::copy(on_s2, cp::TensorView(host.data(), {n}), s2);
    for (std::int64_t i = 0; i < n; ++i)
      exact = exact && host[i] == static_cast<float>(i) && on_host.data<float>()[i] == static_cast<float>(i);
    std::printf("cuplan tensors: read on s2 and on the host after a write on s1 (s1 still busy at the reads: %s)\n",
                held ? "yes" : "no");
    sample::check(exact, "cuplan ordered both reads after the write on another stream");
  });
}
