// SPDX-License-Identifier: Apache-2.0
#include "fft/fftw/chunk_workers.hpp"

namespace cuplan::detail {

ChunkWorkers::~ChunkWorkers() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

int ChunkWorkers::threads() const {
  const std::lock_guard lock(mutex_);
  return static_cast<int>(threads_.size());
}

void ChunkWorkers::run(int count, const std::function<void(int)>& job) {
  if (count <= 1) {
    job(0);
    return;
  }
  const std::lock_guard turn(run_mutex_);
  {
    std::unique_lock lock(mutex_);
    // Thread i serves worker i + 1.
    while (static_cast<int>(threads_.size()) < count - 1) {
      const int index = static_cast<int>(threads_.size()) + 1;
      threads_.emplace_back([this, index] { serve(index); });
    }
    job_ = &job;
    active_ = count;
    pending_ = count - 1;
    ++generation_;
  }
  wake_.notify_all();
  job(0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void ChunkWorkers::serve(int index) {
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (index >= active_) continue;  // not part of this run
    const std::function<void(int)>* job = job_;
    lock.unlock();
    (*job)(index);
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace cuplan::detail
