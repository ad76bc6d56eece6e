// SPDX-License-Identifier: Apache-2.0
#pragma once
// Timing shared by the distributed benchmarks: ranks lined up before each repetition, event-timed repetitions
// after warm-up, and the median over repetitions of the slowest rank.

#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed.hpp>

#include "support/bench_check.hpp"

#define BENCH_NCCL_CHECK(expr) \
  ::bench::check<ncclResult_t>((expr), ncclSuccess, "NCCL", #expr, ncclGetErrorString, __FILE__, __LINE__)

namespace bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Per repetition the slowest rank, then the median over repetitions (0 when nothing was measured).
inline double slowest_median(const std::vector<std::vector<double>>& per_rank) {
  if (per_rank.empty() || per_rank[0].empty()) return 0.0;
  std::vector<double> worst(per_rank[0].size(), 0.0);
  for (const auto& r : per_rank)
    for (std::size_t i = 0; i < r.size(); ++i) worst[i] = std::max(worst[i], r[i]);
  return median(worst);
}

/// Lines the ranks up before each repetition: a host barrier when they are threads of one process, else an
/// all-reduce of one word on a stream of its own, waited for on the host. No communicator: nothing to line up.
class Align {
 public:
  explicit Align(cuplan::Communicator* comm, std::barrier<>* threads = nullptr) : comm_(comm), threads_(threads) {
    if (comm_ == nullptr || threads_ != nullptr) return;
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    BENCH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&word_), sizeof(int)));
    BENCH_CUDA_CHECK(cudaMemsetAsync(word_, 0, sizeof(int), stream_));
  }
  Align(const Align&) = delete;
  Align& operator=(const Align&) = delete;
  ~Align() {
    if (comm_ == nullptr || threads_ != nullptr) return;
    (void)cudaStreamSynchronize(stream_);
    (void)cudaFree(word_);
    (void)cudaStreamDestroy(stream_);
  }
  void operator()() const {
    if (threads_ != nullptr) threads_->arrive_and_wait();
    if (comm_ == nullptr || threads_ != nullptr) return;
    BENCH_NCCL_CHECK(ncclAllReduce(word_, word_, 1, ncclInt32, ncclSum, comm_->native(), stream_));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  cuplan::Communicator* comm_ = nullptr;
  std::barrier<>* threads_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int* word_ = nullptr;
};

/// Times `work` (enqueued on `stream`) `reps` times after `warmup` runs, each repetition after `align`.
template <class F>
std::vector<double> time_on(cuplan::StreamRef stream, const Align& align, int warmup, int reps, F&& work) {
  cuplan::Event start(true), stop(true);
  for (int i = 0; i < warmup; ++i) work();
  stream.synchronize();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    align();
    start.record(stream);
    work();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(cuplan::Event::elapsed_ms(start, stop));
  }
  return ms;
}

}  // namespace bench
