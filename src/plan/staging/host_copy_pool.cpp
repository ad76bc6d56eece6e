#include "plan/staging/host_copy_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cuplan::detail::staging {

namespace {
// Below this a copy runs on the caller alone: waking the workers costs more than it saves.
constexpr std::size_t parallel_bytes = std::size_t{1} << 20;
}  // namespace

struct HostCopyPool::State {
  std::mutex mutex;
  std::condition_variable wake, done;
  std::mutex job_mutex;  // one job at a time
  const std::function<void(std::int64_t)>* task = nullptr;
  std::int64_t tasks = 0;
  std::atomic<std::int64_t> next{0};
  int running = 0;               // workers still in the current job
  std::uint64_t generation = 0;  // a new job
  bool stop = false;
  std::vector<std::thread> threads;

  void run_tasks() {
    for (std::int64_t i = next.fetch_add(1); i < tasks; i = next.fetch_add(1)) (*task)(i);
  }
  void worker() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
      }
      run_tasks();
      std::lock_guard lock(mutex);
      if (--running == 0) done.notify_one();
    }
  }
};

HostCopyPool& HostCopyPool::instance() {
  // Leaked on purpose: copies may run from static destructors, after a pool with a destructor would be gone.
  static HostCopyPool* pool = [] {
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    return new HostCopyPool(static_cast<int>(std::min(hardware, 16u)));
  }();
  return *pool;
}

HostCopyPool::HostCopyPool(int width) : state_(new State), width_(width) {
  for (int i = 1; i < width; ++i) state_->threads.emplace_back([this] { state_->worker(); });
}

HostCopyPool::~HostCopyPool() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  for (std::thread& t : state_->threads) t.join();
  delete state_;
}

void HostCopyPool::parallel_for(std::int64_t tasks, const std::function<void(std::int64_t)>& task) {
  if (tasks <= 0) return;
  std::unique_lock job(state_->job_mutex, std::try_to_lock);
  if (tasks == 1 || state_->threads.empty() || !job.owns_lock()) {
    for (std::int64_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  {
    std::lock_guard lock(state_->mutex);
    state_->task = &task;
    state_->tasks = tasks;
    state_->next.store(0);
    state_->running = static_cast<int>(state_->threads.size());
    ++state_->generation;
  }
  state_->wake.notify_all();
  state_->run_tasks();
  std::unique_lock lock(state_->mutex);
  state_->done.wait(lock, [&] { return state_->running == 0; });
  state_->task = nullptr;
}

void parallel_copy_strided(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size) noexcept {
  const std::size_t bytes = static_cast<std::size_t>(g.numel) * element_size;
  HostCopyPool& pool = HostCopyPool::instance();
  if (bytes < parallel_bytes || g.rank == 0 || pool.width() == 1) {
    copy_strided_host(g, src, dst, element_size);
    return;
  }
  // Slices of the outermost axis (largest destination stride): each slice is a copy of the same form.
  const std::int64_t outer = g.shape[0];
  const std::int64_t slices = std::min<std::int64_t>(outer, std::int64_t{4} * pool.width());
  const auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  const auto size = static_cast<std::int64_t>(element_size);
  pool.parallel_for(slices, [&](std::int64_t i) {
    const std::int64_t begin = outer * i / slices, end = outer * (i + 1) / slices;
    CopyGeometry part = g;
    part.shape[0] = end - begin;
    part.numel = g.numel / outer * part.shape[0];
    copy_strided_host(part, s + begin * g.src_strides[0] * size, d + begin * g.dst_strides[0] * size, element_size);
  });
}

}  // namespace cuplan::detail::staging
