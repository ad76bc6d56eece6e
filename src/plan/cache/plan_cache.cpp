// SPDX-License-Identifier: Apache-2.0
// The function forms' plan cache. Entries live in one LRU list (front = most recently returned); an entry is
// either idle (its plan inside) or checked out (its plan in a PlanLease). A lookup on a hit moves no node and
// allocates nothing: the plan moves into the lease and back.

#include "plan/cache/plan_cache.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "runtime/memory_uses.hpp"

namespace cuplan {
namespace detail {

PlanKey& PlanKey::add_word(std::int64_t value) {
  if (size_ == capacity) [[unlikely]]
    throw InvalidArgument(fmt::format(
        "{} plan key: expected at most {} words describing the call, got more (too many dimensions or axes for one "
        "plan; the operation's own checks should have named the option)",
        words_[0] == static_cast<std::int64_t>(PlanKind::fft) ? "FFT" : "Matmul", capacity));
  words_[size_++] = value;
  return *this;
}

PlanKey& PlanKey::add(const Dims& dims) {
  add(dims.size());
  for (std::int64_t v : dims) add(v);
  return *this;
}

PlanKey& PlanKey::add(double value) {
  return add_word(std::bit_cast<std::int64_t>(value));
}

PlanKey& PlanKey::add(const OperandSignature& operand) {
  add(operand.dtype.code()).add(operand.shape).add(operand.strides);
  add((static_cast<std::int64_t>(operand.device) << 1) | (operand.host ? 1 : 0));
  // Libraries pick kernels by pointer alignment: a plan serves only data of the alignment class it was made for.
  return add(operand.alignment);
}

PlanKey& PlanKey::add_host_execution_device(const TensorView& operand, Execution execution) {
  const bool host = operand.on_host();
  if (host && execution.kind() != Execution::Kind::cpu && execution.device() < 0) {
    int current = -1;
    if (cuda_available() && cudaGetDevice(&current) != cudaSuccess) current = -1;
    add(current);
  }
  return *this;
}

PlanKey& PlanKey::add_work_area(WorkAreaPolicy policy, const std::optional<TensorView>& buffer) {
  add(policy == WorkAreaPolicy::automatic ? WorkAreaPolicy::owned : policy);  // one plan for both names
  if (buffer)
    add(reinterpret_cast<std::intptr_t>(buffer->data()))
        .add(static_cast<std::int64_t>(buffer->span_bytes()))
        .add(buffer->device().index());
  return *this;
}

std::size_t PlanKey::hash() const noexcept {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (std::size_t i = 0; i < size_; ++i) {
    h ^= static_cast<std::uint64_t>(words_[i]);
    h *= 1099511628211ull;
  }
  return static_cast<std::size_t>(h);
}

bool operator==(const PlanKey& a, const PlanKey& b) noexcept {
  return a.size_ == b.size_ && std::memcmp(a.words_.data(), b.words_.data(), a.size_ * sizeof(std::int64_t)) == 0;
}

class PlanCache {
 public:
  struct Entry {
    PlanKey key;
    std::size_t hash;
    std::unique_ptr<CachedPlan> plan;  // null while checked out
    bool busy = false;
    bool orphaned = false;  // cleared from the cache while checked out: destroyed on return
    std::size_t bytes = 0;  // what the plan held when it last came back (held_bytes)
    int device = -1;        // where that memory is (memory_device)
  };
  using List = std::list<Entry>;

  PlanLease try_acquire(const PlanKey& key) {
    const std::size_t h = key.hash();
    PlanLease lease;
    std::lock_guard lock(mutex_);
    auto [first, last] = index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      Entry& entry = *it->second;
      if (!entry.busy && entry.key == key) {
        entry.busy = true;
        ++busy_;
        lease.plan_ = std::move(entry.plan);
        lease.cache_ = this;
        lease.node_ = &*it->second;
        lease.hit_ = true;
        ++hits_;
        return lease;
      }
    }
    ++misses_;
    return lease;
  }

  PlanLease adopt(const PlanKey& key, std::unique_ptr<CachedPlan> plan) {
    PlanLease lease;
    lease.plan_ = std::move(plan);
    lease.cache_ = this;
    const std::size_t held = lease.plan_->held_bytes();
    const int device = lease.plan_->memory_device();
    std::lock_guard lock(mutex_);
    entries_.push_front(Entry{key, key.hash(), nullptr, true, false, 0, device});
    account_memory(MemoryUse::cached_plan, device, 1, 0);
    set_bytes(entries_.front(), held);
    index_.emplace(entries_.front().hash, entries_.begin());
    ++busy_;
    lease.node_ = &entries_.front();
    return lease;
  }

  void give_back(void* node, std::unique_ptr<CachedPlan> plan, bool keep) noexcept {
    std::unique_ptr<CachedPlan> doomed;  // destroyed outside the lock
    std::vector<std::unique_ptr<CachedPlan>> evicted;
    const std::size_t held = keep && plan ? plan->held_bytes() : 0;
    {
      std::lock_guard lock(mutex_);
      auto it = find(static_cast<Entry*>(node));
      --busy_;
      if (!keep || it->orphaned) {
        doomed = std::move(plan);
        erase(it);
      } else {
        set_bytes(*it, held);
        it->plan = std::move(plan);
        it->busy = false;
        entries_.splice(entries_.begin(), entries_, it);
        evicted = trim();
      }
    }
  }

  PlanCacheStats stats() {
    std::lock_guard lock(mutex_);
    return PlanCacheStats{hits_, misses_, evictions_, entries_.size(), capacity_, bytes_, byte_limit_, released_};
  }

  void set_byte_limit(std::size_t bytes) {
    std::vector<std::unique_ptr<CachedPlan>> evicted;
    std::lock_guard lock(mutex_);
    byte_limit_ = bytes;
    evicted = trim();
  }

  void set_capacity(std::size_t capacity) {
    std::vector<std::unique_ptr<CachedPlan>> evicted;
    std::lock_guard lock(mutex_);
    capacity_ = capacity;
    evicted = trim();
  }

  void clear() {
    std::vector<std::unique_ptr<CachedPlan>> doomed;
    {
      std::lock_guard lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end();) {
        auto next = std::next(it);
        if (it->busy) {
          it->orphaned = true;
        } else {
          doomed.push_back(std::move(it->plan));
          erase(it);
        }
        it = next;
      }
    }
    log(LogLevel::info, "plan cache cleared: {} idle plans destroyed", doomed.size());
  }

  void reset_stats() {
    std::lock_guard lock(mutex_);
    hits_ = misses_ = evictions_ = released_ = 0;
  }

 private:
  List::iterator find(Entry* node) {
    auto [first, last] = index_.equal_range(node->hash);
    for (auto it = first; it != last; ++it)
      if (&*it->second == node) return it->second;
    return entries_.end();  // unreachable: every lease's node is indexed until it returns
  }

  void erase(List::iterator it) {
    set_bytes(*it, 0);
    account_memory(MemoryUse::cached_plan, it->device, -1, 0);
    auto [first, last] = index_.equal_range(it->hash);
    for (auto i = first; i != last; ++i) {
      if (i->second == it) {
        index_.erase(i);
        break;
      }
    }
    entries_.erase(it);
  }

  // The bytes an entry's plan holds now: the cache's total and the memory report's count follow.
  void set_bytes(Entry& entry, std::size_t bytes) noexcept {
    bytes_ = bytes_ - entry.bytes + bytes;
    account_memory(MemoryUse::cached_plan, entry.device, 0,
                   static_cast<std::ptrdiff_t>(bytes) - static_cast<std::ptrdiff_t>(entry.bytes));
    entry.bytes = bytes;
  }

  // Over the byte limit: releases the idle plans' memory, least recently used first, until the bytes fit (plans in
  // use keep theirs: their calls are running). Releasing is stream-ordered and never blocks, so it runs locked.
  void release_over_limit() noexcept {
    for (auto it = entries_.end(); bytes_ > byte_limit_ && it != entries_.begin();) {
      --it;
      if (it->busy || it->bytes == 0) continue;
      it->plan->release_idle_memory();
      const std::size_t before = it->bytes;
      set_bytes(*it, it->plan->held_bytes());
      if (it->bytes < before) ++released_;  // a kernel's spectrum (Convolution) stays: nothing else to release
    }
  }

  // Releases idle plans' memory beyond the byte limit, then destroys least recently used idle plans beyond the
  // capacity; returns them to be destroyed unlocked.
  std::vector<std::unique_ptr<CachedPlan>> trim() {
    release_over_limit();
    std::vector<std::unique_ptr<CachedPlan>> evicted;
    std::size_t idle = entries_.size() - busy_;
    for (auto it = entries_.end(); idle > capacity_ && it != entries_.begin();) {
      --it;
      if (it->busy) continue;
      auto victim = it;
      ++it;
      evicted.push_back(std::move(victim->plan));
      erase(victim);
      --idle;
      ++evictions_;
    }
    return evicted;
  }

  std::mutex mutex_;
  List entries_;
  std::unordered_multimap<std::size_t, List::iterator> index_;
  std::size_t capacity_ = 64;
  std::size_t byte_limit_ = plan_cache::no_byte_limit;
  std::size_t bytes_ = 0;  // sum of the entries' bytes
  std::size_t busy_ = 0;
  std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0, released_ = 0;
};

PlanCache& plan_cache_instance() {
  // Never destroyed: plans hold library handles that must not be released after the CUDA runtime shut down.
  static PlanCache* instance = new PlanCache();
  return *instance;
}

PlanLease try_acquire_plan(const PlanKey& key) {
  return plan_cache_instance().try_acquire(key);
}

PlanLease adopt_plan(const PlanKey& key, std::unique_ptr<CachedPlan> plan) {
  return plan_cache_instance().adopt(key, std::move(plan));
}

PlanLease::PlanLease(PlanLease&& other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)),
      node_(std::exchange(other.node_, nullptr)),
      plan_(std::move(other.plan_)),
      hit_(other.hit_) {}

PlanLease& PlanLease::operator=(PlanLease&& other) noexcept {
  if (this != &other) {
    if (cache_ != nullptr) cache_->give_back(node_, std::move(plan_), true);
    cache_ = std::exchange(other.cache_, nullptr);
    node_ = std::exchange(other.node_, nullptr);
    plan_ = std::move(other.plan_);
    hit_ = other.hit_;
  }
  return *this;
}

PlanLease::~PlanLease() {
  if (cache_ != nullptr) {
    const bool keep = plan_ != nullptr;
    cache_->give_back(node_, std::move(plan_), keep);
  }
}

void PlanLease::discard() noexcept {
  if (cache_ != nullptr) cache_->give_back(node_, std::move(plan_), false);
  cache_ = nullptr;
  node_ = nullptr;
}

}  // namespace detail

inline namespace CUPLAN_ABI_NAMESPACE {

namespace plan_cache {
PlanCacheStats stats() {
  return detail::plan_cache_instance().stats();
}
void set_capacity(std::size_t capacity) {
  detail::plan_cache_instance().set_capacity(capacity);
}
void clear() {
  detail::plan_cache_instance().clear();
}
void reset_stats() {
  detail::plan_cache_instance().reset_stats();
}
void set_byte_limit(std::size_t bytes) {
  if (bytes == 0)
    throw InvalidArgument(
        fmt::format("plan_cache::set_byte_limit: bytes: expected 1 to {} or plan_cache::no_byte_limit, got 0 (a cache "
                    "that may hold no byte; plan_cache::clear() empties the cache, set_capacity bounds its plans)",
                    max_byte_limit));
  if (bytes > max_byte_limit && bytes != no_byte_limit)
    throw InvalidArgument(
        fmt::format("plan_cache::set_byte_limit: bytes: expected 1 to {} (1 PiB) or plan_cache::no_byte_limit, got {} "
                    "(a negative number converted?)",
                    max_byte_limit, bytes));
  detail::plan_cache_instance().set_byte_limit(bytes);
}
}  // namespace plan_cache

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
