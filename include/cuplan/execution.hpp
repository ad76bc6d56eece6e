// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where work runs and when calls return (the blocking rule, docs/getting-started.md), the logger hook, and the shared
// plan cache.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "cuplan/export.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// Execution space. `automatic` uses CUDA when a device is present, otherwise the CPU.
class CUPLAN_API Execution {
 public:
  /// The execution space an Execution names.
  enum class Kind : std::uint8_t { automatic, cuda, cpu };
  /// `automatic`.
  constexpr Execution() = default;
  /// CUDA when a device is present, otherwise the CPU.
  static constexpr Execution automatic() { return Execution(); }
  /// CUDA on `device`; -1 means the operands' device (or the current device for host operands).
  static constexpr Execution cuda(int device = -1) { return Execution(Kind::cuda, device, 0); }
  /// The CPU with `threads` threads. 0 means the library default: for FFTW one thread per 64 Ki elements, at most
  /// one per hardware thread; for OpenBLAS its current setting. A count above the hardware concurrency is clamped,
  /// a negative one is an InvalidArgument (docs/getting-started.md, "CPU and GPU execution").
  static constexpr Execution cpu(int threads = 0) { return Execution(Kind::cpu, -1, threads); }

  /// automatic, cuda or cpu.
  constexpr Kind kind() const { return kind_; }
  /// The CUDA device index given to cuda(); -1 for the operands' device, and for the other kinds.
  constexpr int device() const { return device_; }
  /// The CPU thread count given to cpu(); 0 for the library default, and for the other kinds.
  constexpr int threads() const { return threads_; }
  /// Same kind, device and thread count.
  friend constexpr bool operator==(Execution a, Execution b) {
    return a.kind_ == b.kind_ && a.device_ == b.device_ && a.threads_ == b.threads_;
  }

 private:
  constexpr Execution(Kind kind, int device, int threads) : kind_(kind), device_(device), threads_(threads) {}
  Kind kind_ = Kind::automatic;
  int device_ = -1;
  int threads_ = 0;
};

/// `automatic`: host operands with CUDA execution block, device operands return once work is enqueued.
/// `always`: every call synchronises before it returns.
enum class Blocking : std::uint8_t { automatic, always };

/// Where a function-form call that meets a new plan key makes its plan (docs/streams.md, "Planning happens at the
/// call"). Every operation plans at the call, on the caller's thread, in either mode: planning on another thread
/// while the caller's stream waits behind a gate cannot work with today's backends, whose plan creation loads
/// library modules (cuFFT's plans, cuBLASLt's heuristic query), which waits for the whole device, gate included.
/// `background` is accepted and validated for code written against it, and plans as `blocking` does. Explicit
/// plan() of the class forms always plans before it returns.
enum class PlanningMode : std::uint8_t { background, blocking };
/// Where an operation's library work area (cuFFT's work area, cuBLASLt's workspace) comes from (docs/memory.md,
/// "Work areas"). `owned`: the object allocates its own, kept until free() or `release_workspace`. `shared`: one
/// area per device and stream, grown to the largest user, which every object and cached plan with this policy uses
/// on that stream (work on one stream never runs at once, so they never race); a phase on another stream takes that
/// stream's area. `external`: the caller's buffer (`work_area_buffer` of the options), validated for size, device
/// and alignment when the object plans, and kept apart from the call's operands at every call; the caller orders
/// its other uses. `automatic`: `owned` for the class forms, `shared` for the function forms' cached plans (a cached
/// plan then holds no area of its own; a cuplan Stream's areas go with it, see memory::release_work_areas).
enum class WorkAreaPolicy : std::uint8_t { automatic, owned, shared, external };

/// Where a long tuning run stands (Matmul::autotune; one type for every operation that tunes): passed to the
/// `progress` callback of its options after each round of timed runs (docs/matmul.md, "Autotune progress").
struct AutotuneProgress {
  int runs_done = 0;        ///< timed runs finished so far
  int runs_total = 0;       ///< timed runs of the whole tuning (candidates that run x iterations)
  int candidates = 0;       ///< candidates being timed
  double elapsed_ms = 0;    ///< host time since the timing started
  int best_candidate = -1;  ///< the fastest so far by median time, as its index in the heuristic's order
  double best_ms = 0;       ///< that candidate's median time so far (ms)
};
/// A progress callback: called on the calling thread, between rounds (no GPU work of the tuning runs during it).
/// An exception it throws stops the tuning and leaves the call (docs/matmul.md, "Autotune progress").
using AutotuneProgressCallback = std::function<void(const AutotuneProgress&)>;

/// Log levels of the logger hook.
enum class LogLevel : std::uint8_t { debug, info, warning };
/// A logger: called with the level and the message of each log line at or above log_level().
using Logger = std::function<void(LogLevel, std::string_view)>;
/// Install a logger (an empty function turns logging off). It receives what was planned and why, workspace sizes,
/// internal copies made, at or above the log level. Setting CUPLAN_LOG=1 (or =debug, =info, =warning) in the
/// environment logs to stderr when none is set. A logger must not throw: what it throws is caught and dropped (said
/// once on stderr), so that a log line never changes what a call does. Once set_logger() returns, the previous
/// logger is never called again; a logger must therefore not call set_logger() itself, nor log through cuplan.
CUPLAN_API void set_logger(Logger logger);
/// The least severe level passed to the logger; messages below it are not even formatted. Default: debug (all), or
/// the level CUPLAN_LOG names (CUPLAN_LOG=1 means info). InvalidArgument for a value outside LogLevel (the level is
/// then unchanged).
CUPLAN_API void set_log_level(LogLevel level);
/// The level set by set_log_level() (or by CUPLAN_LOG).
CUPLAN_API LogLevel log_level() noexcept;
/// Passes `message` to the installed logger at `level` (nothing when no logger is installed or the level is below
/// log_level()); InvalidArgument for a level outside LogLevel. Components built on cuplan, such as
/// cuplan::distributed, log through it.
CUPLAN_API void log_message(LogLevel level, std::string_view message);

/// Counters of the plan cache shared by the function forms (fft, ifft, rfft, irfft, matmul, the real-to-real forms
/// and fftconvolve).
struct PlanCacheStats {
  std::uint64_t hits = 0;       ///< calls that found an idle plan
  std::uint64_t misses = 0;     ///< calls that had to make a plan
  std::uint64_t evictions = 0;  ///< idle plans destroyed to stay within the capacity
  std::size_t size = 0;         ///< plans held now (idle and in use)
  std::size_t capacity = 0;     ///< most plans kept idle; least recently used beyond it are destroyed
  std::size_t bytes = 0;        ///< memory the plans hold now (own work areas, staging buffers; not shared areas)
  std::size_t byte_limit = static_cast<std::size_t>(-1);  ///< most bytes the plans may hold (plan_cache::no_byte_limit)
  std::uint64_t work_areas_released = 0;  ///< idle plans' work areas released to stay within the byte limit
};

/// The function forms' plan cache: a thread-safe, bounded LRU keyed by everything that defines a plan (operation,
/// shapes, strides, dtypes, options, device). A plan is used by one thread at a time; a call that finds its plan
/// busy makes another. Bounded in plans (capacity) and in bytes (byte limit): over the byte limit, the idle plans'
/// work areas and buffers are released first, least recently used first, then idle plans are destroyed, least
/// recently used first (docs/performance.md, "The plan cache").
namespace plan_cache {
/// The counters now.
CUPLAN_API PlanCacheStats stats();
CUPLAN_API void set_capacity(std::size_t capacity);  ///< default 64
CUPLAN_API void clear();                             ///< destroys idle plans; plans in use go when their call ends
/// The byte limit that sets none, the default: the cache then keeps every idle plan's memory, as before the limit
/// existed, and is bounded by its capacity alone.
inline constexpr std::size_t no_byte_limit = static_cast<std::size_t>(-1);
/// The largest byte limit other than no_byte_limit: 1 PiB, more than any device holds (a larger value is most
/// likely a negative number converted).
inline constexpr std::size_t max_byte_limit = std::size_t{1} << 50;
/// Most bytes the cached plans may hold (see PlanCacheStats::bytes): 1 to max_byte_limit, or no_byte_limit (the
/// default). Over it, idle plans release their memory, least recently used first; they stay cached (a later hit
/// allocates again, so its work area may move). Plans in use are never touched: their memory is released, if need
/// be, when their call ends. InvalidArgument naming `bytes` for 0 (clear() empties the cache) and for a value above
/// max_byte_limit.
CUPLAN_API void set_byte_limit(std::size_t bytes);
/// Sets hits, misses and evictions to zero.
CUPLAN_API void reset_stats();
}  // namespace plan_cache

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
