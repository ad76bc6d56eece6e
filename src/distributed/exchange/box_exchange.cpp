// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/box_exchange.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/collectives.hpp"
#include "distributed/exchange/nccl/exchange.hpp"

namespace cuplan::detail::dist {

void BoxExchange::connect(CommState& comm, int rank, int size, int device, const AgreementValues& values,
                          std::span<const std::string_view> names, const char* what, ExchangeMethod method,
                          cudaStream_t stream) {
  comm_ = &comm;
  rank_ = rank;
  size_ = size;
  device_ = device;
  if (size == 1) {
    route_ = Route::local;
    return;
  }
  peers_.agree(comm, rank, size, device, values, names, what, stream);
  if (method == ExchangeMethod::copy_engine && !peers_.all_reachable())
    throw InvalidArgument(
        fmt::format("{}: exchange: copy_engine needs every rank to address every other rank's memory, but {}; use "
                    "ExchangeMethod::nccl or automatic",
                    what, peers_.why_not()));
  route_ = method != ExchangeMethod::nccl && peers_.all_reachable() ? Route::copy_engine : Route::nccl;
}

std::vector<AgreementValues> BoxExchange::gather(const AgreementValues& mine, cudaStream_t stream) {
  if (size_ == 1) return {mine};
  return peers_.gather(mine, stream);
}

void BoxExchange::prepare(BoxPlan plan, std::int64_t receive_elements, std::size_t element_bytes, const char* what,
                          cudaStream_t stream) {
  plan_ = std::move(plan);
  element_bytes_ = element_bytes;
  if (route_ == Route::copy_engine) {
    peers_.share_buffers(static_cast<std::size_t>(receive_elements) * element_bytes, what, stream);
    if (copy_stream_ == nullptr) {
      CUPLAN_DIST_CUDA(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
      CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&copies_done_, cudaEventDisableTiming));
    }
    if (fork_ == nullptr) CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    return;
  }
  if (route_ != Route::nccl) return;
  // Every rank learns whether every rank could allocate, so that a failure is an error on every rank, not a hang.
  const std::size_t send_bytes = static_cast<std::size_t>(std::max<std::int64_t>(plan_.send_total, 1)) * element_bytes;
  const std::size_t recv_bytes = static_cast<std::size_t>(std::max<std::int64_t>(plan_.recv_total, 1)) * element_bytes;
  AgreementValues status{};
  if (send_ == nullptr) {
    if (cudaMalloc(&send_, send_bytes) != cudaSuccess || cudaMalloc(&recv_, recv_bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      status[0] = 1;
      status[1] = static_cast<std::int64_t>(send_bytes + recv_bytes);
    }
    packed_bytes_ = send_bytes + recv_bytes;
  }
  const std::vector<AgreementValues> all = peers_.gather(status, stream);
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r][0] != 0)
      throw OutOfMemory(
          fmt::format("{}: rank {} could not allocate its {} bytes of packed exchange buffers", what, r, all[r][1]));
  // NCCL connects two ranks at their first message, blocking the host until the device is idle: one byte along
  // every pair this plan uses, here, so that execute only enqueues.
  std::vector<int> to, from;
  for (const PeerSegment& seg : plan_.sends)
    if (seg.peer != rank_) to.push_back(seg.peer);
  for (const PeerSegment& seg : plan_.recvs)
    if (seg.peer != rank_) from.push_back(seg.peer);
  connect_peers(*comm_, what, rank_, to, from, stream);
}

void BoxExchange::execute(const void* src, void* dst, std::int64_t dst_elements, cudaStream_t stream) {
  DeviceGuard guard(device_);
  if (route_ == Route::copy_engine) return run_copy_engine(src, dst, dst_elements, stream);
  if (route_ == Route::nccl) return run_nccl(src, dst, stream);
  for (const PeerSegment& s : plan_.sends)
    for (const BoxTransfer& t : s.direct) enqueue_copy(t, src, device_, dst, device_, element_bytes_, stream);
}

void BoxExchange::run_copy_engine(const void* src, void* dst, std::int64_t dst_elements, cudaStream_t stream) {
  peers_.barrier(stream);  // every peer's receive buffer is free: its last reader ran before its barrier
  CUPLAN_DIST_CUDA(cudaEventRecord(fork_, stream));
  CUPLAN_DIST_CUDA(cudaStreamWaitEvent(copy_stream_, fork_, 0));
  // The peers' pieces one after another on the copy stream, in the plan's shifted-ring order (rank+1 first): at
  // each step the ranks write to different peers, and one peer at a time gets a link's full rate, where copies to
  // every peer at once share it and move about half as much. The own piece is a local copy on the caller's stream,
  // beside them.
  for (const PeerSegment& s : plan_.sends) {
    const PeerBuffer& to = peers_.peer(s.peer);
    cudaStream_t on = s.peer == rank_ ? stream : copy_stream_;
    for (const BoxTransfer& t : s.direct) enqueue_copy(t, src, device_, to.address, to.device, element_bytes_, on);
  }
  CUPLAN_DIST_CUDA(cudaEventRecord(copies_done_, copy_stream_));
  CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream, copies_done_, 0));
  peers_.barrier(stream);  // every peer's pieces have landed here
  if (dst_elements > 0)
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(dst, peers_.own_buffer(), static_cast<std::size_t>(dst_elements) * element_bytes_,
                                     cudaMemcpyDeviceToDevice, stream));
}

void BoxExchange::run_nccl(const void* src, void* dst, cudaStream_t stream) {
  std::vector<Transfer> sends, recvs;
  for (const PeerSegment& s : plan_.sends) {
    if (s.peer == rank_) {
      for (const BoxTransfer& t : s.direct) enqueue_copy(t, src, device_, dst, device_, element_bytes_, stream);
      continue;
    }
    for (const BoxTransfer& t : s.packed) enqueue_copy(t, src, device_, send_, device_, element_bytes_, stream);
    sends.push_back({s.peer, static_cast<std::size_t>(s.offset) * element_bytes_,
                     static_cast<std::size_t>(s.count) * element_bytes_});
  }
  for (const PeerSegment& s : plan_.recvs)
    if (s.peer != rank_)
      recvs.push_back({s.peer, static_cast<std::size_t>(s.offset) * element_bytes_,
                       static_cast<std::size_t>(s.count) * element_bytes_});
  if (!sends.empty() || !recvs.empty()) exchange(*comm_, rank_, send_, sends, recv_, recvs, stream);
  for (const PeerSegment& s : plan_.recvs) {
    if (s.peer == rank_) continue;
    for (const BoxTransfer& t : s.packed) enqueue_copy(t, recv_, device_, dst, device_, element_bytes_, stream);
  }
}

void BoxExchange::release() noexcept {
  if (copy_stream_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaStreamDestroy(copy_stream_));
  copy_stream_ = nullptr;
  if (copies_done_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(copies_done_));
  copies_done_ = nullptr;
  if (fork_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(fork_));
  fork_ = nullptr;
  if (send_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(send_));
  if (recv_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(recv_));
  send_ = recv_ = nullptr;
  packed_bytes_ = 0;
  peers_.release();
}

ExchangeMethod BoxExchange::method() const noexcept {
  return route_ == Route::nccl ? ExchangeMethod::nccl : ExchangeMethod::copy_engine;
}

std::size_t BoxExchange::device_bytes() const noexcept {
  return peers_.buffer_bytes() + packed_bytes_;
}

}  // namespace cuplan::detail::dist
