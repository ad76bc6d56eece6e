// SPDX-License-Identifier: Apache-2.0
// Host cost of the producer bookkeeping of cuplan Tensors (docs/streams.md, "cuplan Tensors across streams"), without
// a GPU: ProducerOrder driven as one device-operand execute drives it, on a stream handle that is the memory's
// allocation stream, so every access is on the producer's own stream and no CUDA call is made. Rows, in nanoseconds
// (median of 9 rounds of 2^20 repetitions each):
//   allocate: a result's ProducerOrder made, started on its stream and destroyed (inside Storage's one allocation);
//   read:     order + note of a read on the producer's stream (an operand);
//   write:    order + note of a write on the producer's stream (a result or an `out`).
// A one-operand execute that allocates its result pays allocate + read, as TensorAccesses leaves a result that the
// call allocated on its own stream alone (before, it also paid write). Internal headers: built beside the library,
// never installed.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <new>
#include <vector>

#include "runtime/producer_order.hpp"

namespace {

using cuplan::detail::ProducerOrder;

constexpr int repetitions = 1 << 20;

template <class F>
double median_ns(F&& body) {
  std::vector<double> rounds;
  for (int round = 0; round < 9; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < repetitions; ++i) body();
    const auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    rounds.push_back(ns / repetitions);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

}  // namespace

int main() {
  // A handle no CUDA call sees: every access below takes the fast path of the producer's own stream.
  const cuplan::StreamRef stream(reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000}));
  const cuplan::Device device = cuplan::Device::cuda(0);
  alignas(ProducerOrder) unsigned char room[sizeof(ProducerOrder)];
  const double allocate = median_ns([&] {
    auto* order = new (room) ProducerOrder();
    order->start(stream, device);
    order->~ProducerOrder();
  });
  ProducerOrder operand;
  operand.start(stream, device);
  const double read = median_ns([&] {
    operand.order(stream, false);
    operand.note(stream, false);
  });
  const double write = median_ns([&] {
    operand.order(stream, true);
    operand.note(stream, true);
  });
  std::printf("producer_order_allocate_ns %.2f\nproducer_order_read_ns %.2f\nproducer_order_write_ns %.2f\n", allocate,
              read, write);
  std::printf("execute_with_new_result_ns %.2f (allocate + read)\n", allocate + read);
  return 0;
}
