// SPDX-License-Identifier: Apache-2.0
// The threads that share a host-callback transform's chunks are kept between executes: every run calls each worker
// index exactly once (index 0 on the caller), later runs reuse the threads, a run with more workers starts only the
// missing ones, and runs from several threads take turns.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "fft/fftw/chunk_workers.hpp"

namespace cuplan::detail {
namespace {

TEST(ChunkWorkers, EveryRunCallsEachIndexOnceAndKeepsItsThreads) {
  ChunkWorkers workers;
  EXPECT_EQ(workers.threads(), 0);
  for (int round = 0; round < 200; ++round) {
    const int count = round < 100 ? 4 : 7;
    std::vector<std::atomic<int>> calls(static_cast<std::size_t>(count));
    std::mutex m;
    std::set<std::thread::id> ids;
    const std::thread::id caller = std::this_thread::get_id();
    std::thread::id index0;
    workers.run(count, [&](int w) {
      calls[static_cast<std::size_t>(w)].fetch_add(1);
      const std::lock_guard lock(m);
      ids.insert(std::this_thread::get_id());
      if (w == 0) index0 = std::this_thread::get_id();
    });
    for (int w = 0; w < count; ++w) ASSERT_EQ(calls[static_cast<std::size_t>(w)].load(), 1) << round << " " << w;
    EXPECT_EQ(index0, caller);
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(count)) << "each index on its own thread";
    EXPECT_EQ(workers.threads(), count - 1) << "threads are kept, and only the missing ones start";
  }
  // Fewer workers than threads: the others sit the run out.
  std::atomic<int> total{0};
  workers.run(2, [&](int) { total.fetch_add(1); });
  EXPECT_EQ(total.load(), 2);
  workers.run(1, [&](int w) { EXPECT_EQ(w, 0); });
  EXPECT_EQ(workers.threads(), 6);
}

TEST(ChunkWorkers, RunsFromSeveralThreadsTakeTurns) {
  ChunkWorkers workers;
  std::atomic<int> inside{0}, most{0}, calls{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        workers.run(3, [&](int w) {
          calls.fetch_add(1);
          if (w == 0) {
            const int now = inside.fetch_add(1) + 1;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            std::this_thread::yield();
            inside.fetch_sub(1);
          }
        });
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(calls.load(), 4 * 50 * 3);
  EXPECT_EQ(most.load(), 1) << "two runs overlapped";
}

}  // namespace
}  // namespace cuplan::detail
