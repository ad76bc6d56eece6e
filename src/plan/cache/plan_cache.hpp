// SPDX-License-Identifier: Apache-2.0
#pragma once
// The function forms' plan cache (shared by FFT and Matmul): a bounded, thread-safe LRU of idle plans.
// acquire() checks a plan out (one thread uses it at a time) and the lease returns it when it ends; a call that
// finds its key busy makes another plan. Keys are fixed-size words so a lookup allocates nothing.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "cuplan/execution.hpp"
#include "cuplan/tensor.hpp"
#include "plan/cache/operand_signature.hpp"

namespace cuplan::detail {

/// Base of anything kept in the cache (an FFT or Matmul implementation object).
class CachedPlan {
 public:
  virtual ~CachedPlan() = default;
  /// Memory the plan holds between calls by itself: an owned work area, staging buffers (not a shared area).
  virtual std::size_t held_bytes() const noexcept { return 0; }
  /// The CUDA device that memory is on (-1: the host), for the memory report.
  virtual int memory_device() const noexcept { return -1; }
  /// Releases what held_bytes() counts, stream-ordered after the plan's last use; the next call allocates again.
  virtual void release_idle_memory() noexcept {}
};

enum class PlanKind : std::uint32_t { fft = 1, matmul = 2, convolution = 3, r2r = 4 };

class PlanKey {
 public:
  static constexpr std::size_t capacity = 128;
  explicit PlanKey(PlanKind kind) { add_word(static_cast<std::int64_t>(kind)); }
  PlanKey& add_word(std::int64_t value);  ///< InvalidArgument past `capacity` words (never for valid plans)
  template <class T>
  requires std::is_integral_v<T> || std::is_enum_v<T> PlanKey& add(T value) {
    return add_word(static_cast<std::int64_t>(value));
  }
  PlanKey& add(const Dims& dims);
  PlanKey& add(double value);
  PlanKey& add(const OperandSignature& operand);  ///< every field: a plan serves only operands it was made for
  /// For operands in host memory whose execution names no device: the current device, which such a plan runs on.
  PlanKey& add_host_execution_device(const TensorView& operand, Execution execution);
  /// The work-area policy and, for an external area, the buffer (address, bytes, device): a plan binds its buffer.
  PlanKey& add_work_area(WorkAreaPolicy policy, const std::optional<TensorView>& buffer);
  std::size_t hash() const noexcept;
  friend bool operator==(const PlanKey& a, const PlanKey& b) noexcept;

 private:
  std::array<std::int64_t, capacity> words_;  // only the first size_ are set (no 1 KiB clear per call)
  std::size_t size_ = 0;
};

class PlanCache;

/// A checked-out plan; returns it to the cache on destruction (or drops it if the cache was cleared meanwhile).
class PlanLease {
 public:
  PlanLease() = default;
  PlanLease(PlanLease&&) noexcept;
  PlanLease& operator=(PlanLease&&) noexcept;
  ~PlanLease();
  CachedPlan* get() const noexcept { return plan_.get(); }
  bool hit() const noexcept { return hit_; }
  /// Drop the plan instead of returning it (after an exception left it in an unknown state).
  void discard() noexcept;

 private:
  friend class PlanCache;
  PlanCache* cache_ = nullptr;
  void* node_ = nullptr;  // the cache entry the plan returns to
  std::unique_ptr<CachedPlan> plan_;
  bool hit_ = false;
};

/// The process-wide cache.
PlanCache& plan_cache_instance();

/// A lease holding the idle plan for `key` (a hit), or an empty lease (a miss, counted).
PlanLease try_acquire_plan(const PlanKey& key);
/// A lease on a plan made after a miss; it joins the cache when the lease ends.
PlanLease adopt_plan(const PlanKey& key, std::unique_ptr<CachedPlan> plan);

/// Check out the plan for `key`, making one with `make()` (returning unique_ptr<Derived>) on a miss. `make` runs
/// outside the cache's lock, so planning never blocks other threads' lookups.
template <class Make>
PlanLease acquire_plan(const PlanKey& key, Make&& make) {
  PlanLease lease = try_acquire_plan(key);
  if (lease.get() != nullptr) return lease;
  return adopt_plan(key, std::forward<Make>(make)());
}

}  // namespace cuplan::detail
