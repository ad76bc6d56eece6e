// SPDX-License-Identifier: Apache-2.0
#pragma once
// The arithmetic of a communicator's timeout, and the list of waits its watchdog watches. Pure (no CUDA, no NCCL,
// the clock a parameter) so that the tests drive it with a fake clock and fake completion: the watchdog owns one
// list of waits, each with a deadline and a token (a CUDA event for the work of an execute, none for a wait of
// plan(), which its scope removes), and polls it.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cuplan::detail::dist {

/// `now + timeout`, or the clock's last instant when `timeout` is 0 or less (wait forever), longer than the clock's
/// duration holds, or the sum would overflow.
template <class Clock>
typename Clock::time_point deadline_after(typename Clock::time_point now, std::chrono::milliseconds timeout) {
  using TimePoint = typename Clock::time_point;
  if (timeout.count() <= 0) return TimePoint::max();
  // A timeout the clock's finer duration cannot hold (milliseconds::max() is 10^6 times too long for nanoseconds)
  // waits forever: converting it would overflow.
  if (timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(Clock::duration::max())) return TimePoint::max();
  const auto span = std::chrono::duration_cast<typename Clock::duration>(timeout);
  if (now > TimePoint::max() - span) return TimePoint::max();
  return now + span;
}

/// How often a wait with this timeout polls: a twentieth of it, within [1 ms, 100 ms], so that an expiry is seen
/// at most 5 % late and a poll costs nothing measurable; 100 ms without a timeout (0).
inline std::chrono::milliseconds poll_interval(std::chrono::milliseconds timeout) {
  using std::chrono::milliseconds;
  if (timeout.count() <= 0) return milliseconds(100);
  return std::clamp(milliseconds(timeout.count() / 20), milliseconds(1), milliseconds(100));
}

/// The waits of one communicator. Not thread-safe: its owner locks.
template <class Clock, class Token>
class WatchList {
 public:
  using TimePoint = typename Clock::time_point;
  struct Watch {
    std::uint64_t id = 0;
    TimePoint deadline{};
    std::string description;  ///< what was waited for, for the error
    Token token{};
  };

  /// Watches a wait until `deadline`; the id removes it.
  std::uint64_t add(TimePoint deadline, std::string description, Token token) {
    watches_.push_back(Watch{++last_id_, deadline, std::move(description), std::move(token)});
    return last_id_;
  }

  /// Stops watching `id`; its token, or nothing when it is gone (finished, expired or taken).
  std::optional<Token> remove(std::uint64_t id) {
    const auto it = std::find_if(watches_.begin(), watches_.end(), [&](const Watch& w) { return w.id == id; });
    if (it == watches_.end()) return std::nullopt;
    Token token = std::move(it->token);
    watches_.erase(it);
    return token;
  }

  /// Asks `done(token)` of every wait: those done leave the list, their tokens appended to `finished`. Of those
  /// not done, the one with the earliest deadline at or before `now` leaves the list and is returned.
  template <class Done>
  std::optional<Watch> poll(TimePoint now, Done&& done, std::vector<Token>& finished) {
    std::optional<Watch> expired;
    for (auto it = watches_.begin(); it != watches_.end();) {
      if (done(it->token)) {
        finished.push_back(std::move(it->token));
        it = watches_.erase(it);
        continue;
      }
      ++it;
    }
    auto late = watches_.end();
    for (auto it = watches_.begin(); it != watches_.end(); ++it)
      if (it->deadline <= now && (late == watches_.end() || it->deadline < late->deadline)) late = it;
    if (late != watches_.end()) {
      expired = std::move(*late);
      watches_.erase(late);
    }
    return expired;
  }

  /// Every token, the list emptied (after an abort, or when the owner stops).
  std::vector<Token> take_all() {
    std::vector<Token> tokens;
    for (Watch& w : watches_) tokens.push_back(std::move(w.token));
    watches_.clear();
    return tokens;
  }

  bool empty() const noexcept { return watches_.empty(); }
  std::size_t size() const noexcept { return watches_.size(); }

 private:
  std::vector<Watch> watches_;
  std::uint64_t last_id_ = 0;
};

}  // namespace cuplan::detail::dist
