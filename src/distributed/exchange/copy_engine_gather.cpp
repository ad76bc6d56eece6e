// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/copy_engine_gather.hpp"

#include <stdexcept>
#include <vector>

#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/stream_flags.hpp"

namespace cuplan::detail::dist {
namespace {

constexpr std::size_t kAlignment = 256;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

}  // namespace

void CopyEngineAllGather::prepare(CommState& comm, PeerTable& table, int rank, int size, int device,
                                  std::span<const std::size_t> block_bytes, const char* what, cudaStream_t stream) {
  if (!table.all_reachable()) throw std::logic_error("CopyEngineAllGather without reachable peers");
  release();
  comm_ = &comm;
  rank_ = rank;
  size_ = size;
  device_ = device;
  bytes_.assign(block_bytes.begin(), block_bytes.end());
  offsets_.clear();
  std::size_t total = 0;
  for (std::size_t b : bytes_) {
    offsets_.push_back(total);
    total += aligned(b);
  }
  flags_offset_ = total;
  const std::size_t flag_words = 2 * static_cast<std::size_t>(size) + 2;
  table.share_buffers(total + flag_words * sizeof(std::uint32_t), what, stream);
  table_ = &table;
  sequence_ = 0;
  flush_ = can_flush_remote_writes(device);
  CUPLAN_DIST_CUDA(cudaMemsetAsync(own_flag(0), 0, flag_words * sizeof(std::uint32_t), stream));
  CUPLAN_DIST_CUDA(cudaStreamCreateWithFlags(&abort_stream_, cudaStreamNonBlocking));
  // After an abort no peer will write its flags: every wait here is released (what then runs computes on stale
  // blocks; the object is dead and says so at its next call). The waits compare cyclically ((int32)(flag - value)
  // >= 0), so the flags are set a quarter of the cycle ahead of the current execute.
  std::uint32_t* flags = own_flag(0);
  const int dev = device_;
  cudaStream_t on = abort_stream_;
  const std::atomic<std::uint32_t>* sequence = &sequence_;
  abort_action_ = comm.on_abort([flags, flag_words, dev, on, sequence]() noexcept {
    const std::vector<std::uint32_t> ahead(flag_words, sequence->load() + (1u << 30));
    int previous = -1;
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaGetDevice(&previous));
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaSetDevice(dev));
    CUPLAN_DIST_CUDA_NOEXCEPT(
        cudaMemcpyAsync(flags, ahead.data(), flag_words * sizeof(std::uint32_t), cudaMemcpyHostToDevice, on));
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaStreamSynchronize(on));  // `ahead` is read before it goes
    if (previous >= 0) CUPLAN_DIST_CUDA_NOEXCEPT(cudaSetDevice(previous));
  });
}

const void* CopyEngineAllGather::block(int owner) const {
  return static_cast<const char*>(table_->own_buffer()) + offsets_.at(static_cast<std::size_t>(owner));
}

std::uint32_t* CopyEngineAllGather::own_flag(std::size_t index) const {
  return reinterpret_cast<std::uint32_t*>(static_cast<char*>(table_->own_buffer()) + flags_offset_) + index;
}

void* CopyEngineAllGather::peer_flag(int peer, std::size_t index) const {
  return reinterpret_cast<std::uint32_t*>(static_cast<char*>(table_->peer(peer).address) + flags_offset_) + index;
}

void CopyEngineAllGather::push(const void* own, cudaStream_t copy_stream) {
  const std::uint32_t sequence = ++sequence_;
  const auto n = static_cast<std::size_t>(size_);
  std::uint32_t* push_word = own_flag(2 * n);
  write_flag(copy_stream, push_word, sequence);
  const std::size_t bytes = bytes_[static_cast<std::size_t>(rank_)];
  for (int step = 1; step < size_; ++step) {
    const int peer = (rank_ + step) % size_;
    wait_flag_at_least(copy_stream, own_flag(n + static_cast<std::size_t>(peer)), sequence - 1, flush_);
    const PeerBuffer& to = table_->peer(peer);
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(static_cast<char*>(to.address) + offsets_[static_cast<std::size_t>(rank_)], own,
                                     bytes, cudaMemcpyDefault, copy_stream));
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(peer_flag(peer, static_cast<std::size_t>(rank_)), push_word, sizeof(std::uint32_t),
                                     cudaMemcpyDefault, copy_stream));
  }
}

void CopyEngineAllGather::wait_for(int owner, cudaStream_t stream) {
  wait_flag_at_least(stream, own_flag(static_cast<std::size_t>(owner)), sequence_.load(), flush_);
}

void CopyEngineAllGather::finish(cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(size_);
  const std::uint32_t sequence = sequence_.load();
  std::uint32_t* release_word = own_flag(2 * n + 1);
  write_flag(stream, release_word, sequence);
  for (int step = 1; step < size_; ++step) {
    const int peer = (rank_ + step) % size_;
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(peer_flag(peer, n + static_cast<std::size_t>(rank_)), release_word,
                                     sizeof(std::uint32_t), cudaMemcpyDefault, stream));
  }
  for (int step = 1; step < size_; ++step)
    wait_flag_at_least(stream, own_flag(n + static_cast<std::size_t>((rank_ + step) % size_)), sequence, flush_);
}

void CopyEngineAllGather::release() noexcept {
  if (comm_ != nullptr && abort_action_ != 0) comm_->remove_abort_action(abort_action_);
  abort_action_ = 0;
  if (abort_stream_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaStreamDestroy(abort_stream_));
  abort_stream_ = nullptr;
  table_ = nullptr;
  comm_ = nullptr;
}

}  // namespace cuplan::detail::dist
