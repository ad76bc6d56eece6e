// SPDX-License-Identifier: Apache-2.0
#pragma once
// The moving half of the exchange layer: one object per exchange that moves a distributed array from every rank's
// source local array to every rank's destination local array, as planned by plan_boxes. Inside a node (every rank
// able to address every other's memory) the copy engines copy each piece straight into the peer's receive buffer,
// one peer after another in shifted-ring order on one copy stream, between two barriers; elsewhere, or on request,
// NCCL carries the packed pieces in one group of sends and receives. Every call that is collective says so; every
// rank makes them in the same order.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuplan/distributed.hpp"
#include "distributed/exchange/agreement.hpp"
#include "distributed/exchange/box_plan.hpp"
#include "distributed/exchange/nccl/peer_table.hpp"

namespace cuplan::detail::dist {

class BoxExchange {
 public:
  enum class Route { local, copy_engine, nccl };

  BoxExchange() = default;
  BoxExchange(const BoxExchange&) = delete;
  BoxExchange& operator=(const BoxExchange&) = delete;
  ~BoxExchange() { release(); }

  /// Collective, blocking: checks that every rank sent the same `values` (InvalidArgument on every rank naming the
  /// first field that differs, prefixed by `what`) and chooses the route for `method`: copy engines when every rank
  /// can address every other's memory (InvalidArgument on every rank when `copy_engine` was asked and they cannot),
  /// else NCCL; one rank is local.
  void connect(CommState& comm, int rank, int size, int device, const AgreementValues& values,
               std::span<const std::string_view> names, const char* what, ExchangeMethod method, cudaStream_t stream);
  /// Collective, blocking, after connect(): every rank's `mine`, in rank order.
  std::vector<AgreementValues> gather(const AgreementValues& mine, cudaStream_t stream);
  /// Collective, blocking, after connect(): keeps `plan` and makes its buffers. `receive_elements` is the largest
  /// destination array of any rank (the same on every rank): the receive buffer peers write into on the copy-engine
  /// route. NCCL: packed send and receive buffers of the plan's totals.
  void prepare(BoxPlan plan, std::int64_t receive_elements, std::size_t element_bytes, const char* what,
               cudaStream_t stream);
  /// Collective: enqueues the move on `stream`. `src` is this rank's source local array, `dst` its destination
  /// local array, both in device memory of this rank's device; `dst` is complete in stream order.
  void execute(const void* src, void* dst, std::int64_t dst_elements, cudaStream_t stream);
  /// Frees the buffers, streams and events. Never throws.
  void release() noexcept;

  Route route() const noexcept { return route_; }
  /// The route as the public enum: copy_engine or nccl (a single rank counts as copy_engine: local copies).
  ExchangeMethod method() const noexcept;
  /// Why the copy engines were not used (empty when they were, or for one rank).
  const std::string& why_not() const noexcept { return peers_.why_not(); }
  /// Device memory held between executes: receive buffer, packed buffers.
  std::size_t device_bytes() const noexcept;
  const BoxPlan& plan() const noexcept { return plan_; }

 private:
  void run_copy_engine(const void* src, void* dst, std::int64_t dst_elements, cudaStream_t stream);
  void run_nccl(const void* src, void* dst, cudaStream_t stream);

  CommState* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  Route route_ = Route::local;
  PeerTable peers_;
  BoxPlan plan_;
  std::size_t element_bytes_ = 1;
  void* send_ = nullptr;  // NCCL: packed pieces out
  void* recv_ = nullptr;  // NCCL: packed pieces in
  std::size_t packed_bytes_ = 0;
  cudaStream_t copy_stream_ = nullptr;  // copy engine: the peers' pieces, in ring order
  cudaEvent_t copies_done_ = nullptr;
  cudaEvent_t fork_ = nullptr;
};

}  // namespace cuplan::detail::dist
