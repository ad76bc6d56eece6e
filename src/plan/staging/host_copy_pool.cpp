// SPDX-License-Identifier: Apache-2.0
#include "plan/staging/host_copy_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/log.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cuplan::detail::staging {

namespace {
// Below this a copy runs on the caller alone: waking the workers costs more than it saves.
constexpr std::size_t parallel_bytes = std::size_t{1} << 20;
// More threads than this do not copy faster on the hosts measured (docs/staging.md), and take CPUs from the caller.
constexpr int default_max_width = 16;
constexpr int max_width = 256;

int available_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// A contiguous copy with non-temporal stores (x86 SSE2), or memcpy. The stores bypass the cache and write whole
// lines without reading them first: on a host whose memory bandwidth the DMAs already use, an unpack into pageable
// memory with ordinary stores ran at a half to four fifths of the D2H DMA rate (docs/staging.md).
void copy_streaming(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
#if defined(__SSE2__)
  const std::size_t head = std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();  // the stores are weakly ordered: complete them before the slice is reported done
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace

struct HostCopyPool::State {
  std::mutex mutex;
  std::condition_variable wake, done;
  // One job at a time. A flag, not a mutex: a thread that holds a started job and asks for another (it runs that
  // one alone) must not try_lock a mutex it owns.
  std::atomic<bool> busy{false};
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
    const char* environment = std::getenv("CUPLAN_HOST_COPY_THREADS");
    bool valid = true;
    const int width = host_copy_width(environment, available_cpus(), &valid);
    if (!valid)
      log(LogLevel::warning, "CUPLAN_HOST_COPY_THREADS: expected a whole number in [1, {}], got '{}'; using {}",
          max_width, environment, width);
    return new HostCopyPool(width);
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
  Job job;
  start(job, tasks, task);
  job.join();
}

void HostCopyPool::start(Job& job, std::int64_t tasks, const std::function<void(std::int64_t)>& task) {
  job.pool_ = this;
  job.task_ = &task;
  job.tasks_ = std::max<std::int64_t>(tasks, 0);
  job.on_pool_ = false;
  bool idle = false;
  if (tasks <= 1 || state_->threads.empty() || !state_->busy.compare_exchange_strong(idle, true)) return;
  job.on_pool_ = true;  // the pool stays busy until join
  {
    std::lock_guard lock(state_->mutex);
    state_->task = &task;
    state_->tasks = tasks;
    state_->next.store(0);
    state_->running = static_cast<int>(state_->threads.size());
    ++state_->generation;
  }
  state_->wake.notify_all();
}

void HostCopyPool::Job::join() noexcept {
  if (pool_ == nullptr) return;
  State& state = *pool_->state_;
  if (!on_pool_) {
    for (std::int64_t i = 0; i < tasks_; ++i) (*task_)(i);
  } else {
    state.run_tasks();
    std::unique_lock lock(state.mutex);
    state.done.wait(lock, [&] { return state.running == 0; });
    state.task = nullptr;
    lock.unlock();
    state.busy.store(false);
  }
  pool_ = nullptr;
}

int host_copy_width(const char* environment, int available_cpus, bool* valid_environment) noexcept {
  if (valid_environment != nullptr) *valid_environment = true;
  if (environment != nullptr && *environment != '\0') {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(environment, &end, 10);
    const bool digits_only = *environment >= '0' && *environment <= '9' && *end == '\0';  // no sign or space
    if (errno == 0 && digits_only && value >= 1 && value <= max_width) return static_cast<int>(value);
    if (valid_environment != nullptr) *valid_environment = false;
  }
  return std::clamp(available_cpus, 1, default_max_width);
}

void parallel_copy_strided(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size) noexcept {
  parallel_copy_blocks(g, src, dst, element_size, 1, {}, {});
}

int contiguous_blocks(const CopyGeometry& g, std::size_t element_size, bool split_source, std::size_t block_bytes,
                      int max_blocks) noexcept {
  if (g.rank == 0 || max_blocks <= 1 || block_bytes == 0) return 1;
  const std::size_t bytes = static_cast<std::size_t>(g.numel) * element_size;
  const std::int64_t outer_stride = split_source ? g.src_strides[0] : g.dst_strides[0];
  // Each slice of axis 0 is one contiguous range of that side when it is dense with axis 0 outermost.
  if (outer_stride <= 0 || static_cast<std::size_t>(outer_stride * g.shape[0]) * element_size != bytes) return 1;
  const std::int64_t wanted = std::clamp<std::int64_t>(static_cast<std::int64_t>(bytes / block_bytes), 1, max_blocks);
  return static_cast<int>(std::min(wanted, g.shape[0]));
}

std::pair<std::int64_t, std::int64_t> block_rows(const CopyGeometry& g, int blocks, int block) noexcept {
  const std::int64_t outer = g.rank == 0 ? 1 : g.shape[0];
  return {outer * block / blocks, outer * (block + 1) / blocks};
}

void parallel_copy_blocks(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size, int blocks,
                          const std::function<void(int)>& before_block,
                          const std::function<void(int)>& after_block) noexcept {
  BlockCopy copy(g, src, dst, element_size, blocks, before_block, after_block);
  copy.join();
}

BlockCopy::BlockCopy(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size, int blocks,
                     std::function<void(int)> before_block, std::function<void(int)> after_block, Stores stores)
    : g_(g),
      src_(static_cast<const std::byte*>(src)),
      dst_(static_cast<std::byte*>(dst)),
      element_size_(element_size),
      blocks_(blocks),
      before_block_(std::move(before_block)),
      after_block_(std::move(after_block)),
      stores_(stores) {
  const std::size_t bytes = static_cast<std::size_t>(g.numel) * element_size;
  HostCopyPool& pool = HostCopyPool::instance();
  if (g.rank == 0 || g.numel == 0) blocks_ = 1;
  blocks_ =
      static_cast<int>(std::clamp<std::int64_t>(blocks_, 1, g.rank == 0 ? 1 : std::max<std::int64_t>(1, g.shape[0])));
  if (blocks_ == 1 && (bytes < parallel_bytes || g.rank == 0 || pool.width() == 1)) {
    serial_ = true;
    return;
  }
  // Slices of the outermost axis (largest destination stride): each slice is a copy of the same form. Slices are
  // numbered block by block, and threads take them in order, so the first blocks finish first.
  const std::int64_t wanted = bytes < parallel_bytes ? 1 : std::int64_t{4} * pool.width();
  const std::int64_t per_block = std::max<std::int64_t>(1, wanted / blocks_);
  const auto count = static_cast<std::size_t>(blocks_);
  per_.resize(count);
  first_.assign(count + 1, 0);
  left_ = std::make_unique<std::atomic<std::int64_t>[]>(count);
  for (std::size_t b = 0; b < count; ++b) {
    const auto [begin, end] = block_rows(g, blocks_, static_cast<int>(b));
    per_[b] = std::min(per_block, end - begin);
    first_[b + 1] = first_[b] + per_[b];
    left_[b].store(per_[b]);
  }
  task_ = [this](std::int64_t t) { run_slice(t); };
  pool.start(job_, first_.back(), task_);
}

void BlockCopy::run_slice(std::int64_t t) noexcept {
  const int b = static_cast<int>(std::upper_bound(first_.begin(), first_.end(), t) - first_.begin()) - 1;
  const auto index = static_cast<std::size_t>(b);
  const auto [block_begin, block_end] = block_rows(g_, blocks_, b);
  const std::int64_t i = t - first_[index], n = per_[index];
  const std::int64_t begin = block_begin + (block_end - block_begin) * i / n;
  const std::int64_t end = block_begin + (block_end - block_begin) * (i + 1) / n;
  if (before_block_) before_block_(b);
  CopyGeometry part = g_;
  part.shape[0] = end - begin;
  part.numel = g_.numel / g_.shape[0] * part.shape[0];
  const auto size = static_cast<std::int64_t>(element_size_);
  const std::byte* src = src_ + begin * g_.src_strides[0] * size;
  std::byte* dst = dst_ + begin * g_.dst_strides[0] * size;
  if (stores_ == Stores::streaming && part.rank == 1 && g_.src_strides[0] == 1 && g_.dst_strides[0] == 1)
    copy_streaming(dst, src, static_cast<std::size_t>(part.numel) * element_size_);
  else
    copy_strided_host(part, src, dst, element_size_);
  if (left_[index].fetch_sub(1) == 1 && after_block_) after_block_(b);
}

void BlockCopy::join() noexcept {
  if (!serial_) {
    job_.join();
    return;
  }
  serial_ = false;  // once
  if (before_block_) before_block_(0);
  copy_strided_host(g_, src_, dst_, element_size_);
  if (after_block_) after_block_(0);
}

}  // namespace cuplan::detail::staging
