// SPDX-License-Identifier: Apache-2.0
// The BLAS thread count per call (blas_vendor.hpp): groups of calls with the same count, the process's count restored
// after each group (blas_threads.hpp).

#include "matmul/cpu/blas_threads.hpp"

#include "matmul/cpu/blas_vendor.hpp"

namespace cuplan::detail::mm {
namespace {

struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  unsigned long long next_ticket = 0;  // handed to each call on arrival
  unsigned long long admitted = 0;     // calls are admitted in ticket order: no count can starve another
  int running = 0;                     // admitted calls not yet done
  int group_count = 0;                 // the count the running calls run with (meaningful while running > 0)
  int process_count = 0;               // the process's own count, read when a group starts, put back when it ends
};

Gate& gate() {
  static Gate instance;
  return instance;
}

}  // namespace

BlasThreads::BlasThreads(int threads) {
  Gate& g = gate();
  std::unique_lock lock(g.mutex);
  const unsigned long long ticket = g.next_ticket++;
  const auto wanted = [&] { return threads > 0 ? threads : g.process_count; };
  // In arrival order: join the running calls when they run with the count this call needs, else wait until they
  // are all done.
  g.changed.wait(lock, [&] { return ticket == g.admitted && (g.running == 0 || wanted() == g.group_count); });
  if (g.running == 0) {
    // A new group: the process's count is whatever it is now (the program may have changed it between calls).
    g.process_count = blas_thread_count();
    g.group_count = wanted();
    if (g.group_count != g.process_count) set_blas_thread_count(g.group_count);
  }
  ++g.running;
  ++g.admitted;
  g.changed.notify_all();  // the next arrival may join this group
}

BlasThreads::~BlasThreads() {
  Gate& g = gate();
  std::lock_guard lock(g.mutex);
  if (--g.running > 0) return;
  if (g.group_count != g.process_count) set_blas_thread_count(g.process_count);
  g.changed.notify_all();
}

}  // namespace cuplan::detail::mm
