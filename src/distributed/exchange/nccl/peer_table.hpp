// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the ranks of a communicator tell each other when a distributed object plans: who they are (process, host,
// device), whether they agree on what they plan, and, for copy-engine exchanges, where each rank's receive buffer
// lies. Peers that can reach each other's memory (one process with peer access, or processes on one host through
// CUDA IPC handles) exchange by copy engine; elsewhere NCCL carries the data. Every step is collective and ends in
// the same decision, or the same exception, on every rank.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "distributed/exchange/agreement.hpp"
#include "distributed/exchange/box_transfer.hpp"
#include "distributed/exchange/nccl/comm_state.hpp"

namespace cuplan::detail::dist {

/// One peer's receive buffer as this process addresses it.
struct PeerBuffer {
  void* address = nullptr;  ///< the peer's buffer in this process's address space (raw, or an opened IPC handle)
  int device = -1;          ///< the peer's device as this process numbers it
  bool opened = false;      ///< an IPC handle this process opened (closed with the table)
};

class PeerTable {
 public:
  PeerTable() = default;
  PeerTable(const PeerTable&) = delete;
  PeerTable& operator=(const PeerTable&) = delete;
  ~PeerTable();

  /// Collective, blocking: every rank sends its identity and `values`; InvalidArgument on every rank when one
  /// differs from rank 0 (the message names the rank, the field and both values, prefixed by `what`). Then decides
  /// whether every pair of ranks can reach each other's memory. Call once per object, before anything else that is
  /// collective.
  void agree(CommState& comm, int rank, int size, int device, const AgreementValues& values,
             std::span<const std::string_view> names, const char* what, cudaStream_t stream);
  /// Collective, blocking, after agree(): every rank's `mine`, in rank order (values that differ by rank, such as
  /// each rank's boxes).
  std::vector<AgreementValues> gather(const AgreementValues& mine, cudaStream_t stream);
  /// True when agree() found every pair of ranks able to address each other's memory; `why_not` says which pair
  /// could not, and why, when not.
  bool all_reachable() const noexcept { return all_reachable_; }
  const std::string& why_not() const noexcept { return why_not_; }

  /// Collective, blocking: allocates this rank's receive buffer of `bytes` (cudaMalloc: it outlives executes, and
  /// IPC needs it) and learns every peer's. A rank that fails to allocate makes every rank throw.
  void share_buffers(std::size_t bytes, const char* what, cudaStream_t stream);
  /// This rank's receive buffer, and peer `rank`'s as this process addresses it.
  void* own_buffer() const noexcept { return own_; }
  const PeerBuffer& peer(int rank) const { return peers_.at(static_cast<std::size_t>(rank)); }
  std::size_t buffer_bytes() const noexcept { return own_bytes_; }

  /// Enqueues a barrier on `stream`: work after it starts on every rank only once every rank's stream reached it.
  void barrier(cudaStream_t stream);
  /// Releases the buffers and IPC mappings. Never throws.
  void release() noexcept;

 private:
  template <class Card>
  std::vector<Card> all_gather(const Card& mine, const char* waiting_for, cudaStream_t stream);

  CommState* comm_ = nullptr;
  const char* what_ = "";  // the operation that planned, for the errors of a timeout
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  bool all_reachable_ = false;
  std::string why_not_;
  std::vector<int> peer_device_;    // each rank's device as this process numbers it (-1: not visible)
  std::vector<bool> same_process_;  // each rank's process is this one
  std::vector<PeerBuffer> peers_;
  void* own_ = nullptr;
  std::size_t own_bytes_ = 0;
  int* barrier_word_ = nullptr;
};

/// Enqueues `t` as one copy-engine copy (1D, 2D or 3D) from the array at `src` on `src_device` to the array at
/// `dst` on `dst_device`, elements of `element_bytes`.
void enqueue_copy(const BoxTransfer& t, const void* src, int src_device, void* dst, int dst_device,
                  std::size_t element_bytes, cudaStream_t stream);

}  // namespace cuplan::detail::dist
