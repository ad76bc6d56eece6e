// SPDX-License-Identifier: Apache-2.0
#pragma once
// An all-gather by copy engine inside a node: every rank pushes its block straight into each peer's gather buffer
// (cudaMalloc memory that peers address, through peer access or CUDA IPC handles), one peer after another in
// shifted-ring order (rank + 1 first, so that at each step every rank sends to a different peer), and a reader
// waits for each block's arrival flag before it uses the block. Flags, not barriers: the waits and writes are
// stream memory operations, which need no multiprocessor, so the copies run beside GEMMs that fill every one.
//
// Per execute e (counted from 1), in each rank's buffer: arrived[r] = e once rank r's block of execute e landed
// here, consumed[q] = e once rank q has read this rank's block of execute e (so that execute e+1 may overwrite it).

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "distributed/exchange/nccl/comm_state.hpp"
#include "distributed/exchange/nccl/peer_table.hpp"

namespace cuplan::detail::dist {

class CopyEngineAllGather {
 public:
  CopyEngineAllGather() = default;
  CopyEngineAllGather(const CopyEngineAllGather&) = delete;
  CopyEngineAllGather& operator=(const CopyEngineAllGather&) = delete;
  ~CopyEngineAllGather() { release(); }

  /// Collective, blocking: lays out one region per rank (`block_bytes`, the same on every rank), shares the gather
  /// buffers through `table` (agreed, every rank reachable) and zeroes the flags. An abort of `comm` sets every
  /// flag here, so that no stream waits on a peer that will never write.
  void prepare(CommState& comm, PeerTable& table, int rank, int size, int device,
               std::span<const std::size_t> block_bytes, const char* what, cudaStream_t stream);
  /// Where `owner`'s block lands in this rank's buffer.
  const void* block(int owner) const;
  /// Starts an execute: pushes this rank's block `own` to every peer on `copy_stream`, each push after that peer
  /// has read the previous execute's block, each followed by its arrival flag.
  void push(const void* own, cudaStream_t copy_stream);
  /// Enqueues on `stream` a wait for `owner`'s block of the current execute.
  void wait_for(int owner, cudaStream_t stream);
  /// After the last read of the gathered blocks on `stream`: tells every peer its block here may be overwritten,
  /// then waits until every peer has said the same of this rank's block. Once `stream` passes this point no peer
  /// writes into this rank's buffer until the next push, so the buffer may be freed after it.
  void finish(cudaStream_t stream);
  /// Device memory held: the gather buffer with its flags.
  std::size_t device_bytes() const noexcept { return table_ != nullptr ? table_->buffer_bytes() : 0; }
  /// Unregisters from the communicator and destroys the stream; the buffer is the table's. Never throws.
  void release() noexcept;
  bool prepared() const noexcept { return table_ != nullptr; }

 private:
  std::uint32_t* own_flag(std::size_t index) const;
  void* peer_flag(int peer, std::size_t index) const;

  CommState* comm_ = nullptr;
  PeerTable* table_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  std::vector<std::size_t> offsets_, bytes_;
  std::size_t flags_offset_ = 0;            // arrived[size], consumed[size], push word, release word
  std::atomic<std::uint32_t> sequence_{0};  // read by the communicator's watchdog thread at an abort
  bool flush_ = false;                      // the waits flush peers' writes (where the device can)
  cudaStream_t abort_stream_ = nullptr;
  std::uint64_t abort_action_ = 0;
};

}  // namespace cuplan::detail::dist
