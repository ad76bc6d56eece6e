// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/nccl/peer_table.hpp"

#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "distributed/exchange/cuda_status.hpp"

namespace cuplan::detail::dist {

namespace {

constexpr std::uint64_t card_magic = 0x6375706c616e3031ull;  // guards against a peer that is not this code

struct IdentityCard {
  std::uint64_t magic = card_magic;
  std::int64_t pid = 0;
  char host[64]{};
  char uuid[16]{};
  AgreementValues values{};
};

struct ReachCard {
  std::int32_t unreachable_peer = -1;  // first peer this rank cannot address, or -1
  char reason[100]{};
};

struct BufferCard {
  std::int32_t ok = 0;
  std::int32_t pad = 0;
  std::uint64_t address = 0;
  cudaIpcMemHandle_t handle{};
  char error[200]{};
};

void copy_text(char* dst, std::size_t size, std::string_view text) {
  const std::size_t n = std::min(size - 1, text.size());
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

// The device of this process whose UUID is `uuid`, or -1.
int device_with_uuid(const char* uuid) {
  int count = 0;
  CUPLAN_DIST_CUDA(cudaGetDeviceCount(&count));
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    CUPLAN_DIST_CUDA(cudaGetDeviceProperties(&prop, d));
    if (std::memcmp(prop.uuid.bytes, uuid, sizeof(prop.uuid.bytes)) == 0) return d;
  }
  return -1;
}

}  // namespace

PeerTable::~PeerTable() {
  release();
}

template <class Card>
std::vector<Card> PeerTable::all_gather(const Card& mine, const char* waiting_for, cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<Card>);
  std::vector<Card> all(static_cast<std::size_t>(size_));
  void* scratch = nullptr;
  CUPLAN_DIST_CUDA(cudaMalloc(&scratch, sizeof(Card) * all.size()));
  try {
    auto* slots = static_cast<char*>(scratch);
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(slots + sizeof(Card) * static_cast<std::size_t>(rank_), &mine, sizeof(Card),
                                     cudaMemcpyHostToDevice, stream));
    PeerWait wait(*comm_, what_, waiting_for);
    CUPLAN_COMM_CHECK(*comm_, ncclAllGather(slots + sizeof(Card) * static_cast<std::size_t>(rank_), slots, sizeof(Card),
                                            ncclUint8, comm_->live(what_), stream));
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(all.data(), slots, sizeof(Card) * all.size(), cudaMemcpyDeviceToHost, stream));
    wait.synchronize(stream);
  } catch (...) {
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(scratch));
    throw;
  }
  CUPLAN_DIST_CUDA(cudaFree(scratch));
  return all;
}

void PeerTable::agree(CommState& comm, int rank, int size, int device, const AgreementValues& values,
                      std::span<const std::string_view> names, const char* what, cudaStream_t stream) {
  comm_ = &comm;
  what_ = what;
  rank_ = rank;
  size_ = size;
  device_ = device;
  IdentityCard me;
  me.pid = static_cast<std::int64_t>(::getpid());
  if (::gethostname(me.host, sizeof(me.host) - 1) != 0) copy_text(me.host, sizeof(me.host), "unknown");
  cudaDeviceProp prop{};
  CUPLAN_DIST_CUDA(cudaGetDeviceProperties(&prop, device));
  std::memcpy(me.uuid, prop.uuid.bytes, sizeof(me.uuid));
  me.values = values;
  const std::vector<IdentityCard> cards =
      all_gather(me, "the agreement all-gather (every rank's identity, shape and options)", stream);
  std::vector<AgreementValues> per_rank;
  for (const IdentityCard& c : cards) {
    if (c.magic != card_magic)
      throw InvalidArgument(fmt::format("{}: a rank of the communicator answered with data of another program", what));
    per_rank.push_back(c.values);
  }
  if (auto differs = first_disagreement(per_rank, names))
    throw InvalidArgument(fmt::format("{}: every rank must plan the same operation; {}", what, *differs));

  // Which peers this rank can address: same host, the peer's device visible here, and peer access between them.
  peer_device_.assign(cards.size(), -1);
  same_process_.assign(cards.size(), false);
  ReachCard reach;
  for (int r = 0; r < size_; ++r) {
    const IdentityCard& c = cards[static_cast<std::size_t>(r)];
    same_process_[static_cast<std::size_t>(r)] = c.pid == me.pid && std::strcmp(c.host, me.host) == 0;
    if (std::strcmp(c.host, me.host) != 0) {
      if (reach.unreachable_peer < 0) {
        reach.unreachable_peer = r;
        copy_text(reach.reason, sizeof(reach.reason), fmt::format("on another host ({})", c.host));
      }
      continue;
    }
    const int d = device_with_uuid(c.uuid);
    peer_device_[static_cast<std::size_t>(r)] = d;
    int can = d == device_ ? 1 : 0;
    if (d >= 0 && d != device_) CUPLAN_DIST_CUDA(cudaDeviceCanAccessPeer(&can, device_, d));
    if ((d < 0 || can == 0) && reach.unreachable_peer < 0) {
      reach.unreachable_peer = r;
      copy_text(reach.reason, sizeof(reach.reason),
                d < 0 ? "its GPU is not visible to this process" : "no peer access between the two GPUs");
    }
  }
  const std::vector<ReachCard> reaches =
      all_gather(reach, "the all-gather of which peers each rank can address", stream);
  all_reachable_ = true;
  why_not_.clear();
  for (int r = 0; r < size_ && all_reachable_; ++r) {
    const ReachCard& c = reaches[static_cast<std::size_t>(r)];
    if (c.unreachable_peer >= 0) {
      all_reachable_ = false;
      why_not_ = fmt::format("rank {} cannot address rank {}'s memory: {}", r, c.unreachable_peer, c.reason);
    }
  }
  if (!barrier_word_) CUPLAN_DIST_CUDA(cudaMalloc(reinterpret_cast<void**>(&barrier_word_), 16));
  CUPLAN_DIST_CUDA(cudaMemsetAsync(barrier_word_, 0, 16, stream));
  PeerWait wait(*comm_, what_, "the first barrier (which connects the peers for the barriers of execute)");
  barrier(stream);  // connects the peers for the barrier now, so that a first execute does not block on it
  wait.synchronize(stream);
}

std::vector<AgreementValues> PeerTable::gather(const AgreementValues& mine, cudaStream_t stream) {
  if (comm_ == nullptr) throw std::logic_error("PeerTable::gather before agree");
  return all_gather(mine, "the all-gather of every rank's boxes or status", stream);
}

void PeerTable::share_buffers(std::size_t bytes, const char* what, cudaStream_t stream) {
  if (!all_reachable_) throw std::logic_error("share_buffers without reachable peers");
  BufferCard mine;
  std::string failure;
  if (own_ == nullptr || own_bytes_ < bytes) {
    if (own_ != nullptr) {
      CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(own_));
      own_ = nullptr;
      own_bytes_ = 0;
    }
    const cudaError_t status = cudaMalloc(&own_, std::max<std::size_t>(bytes, 16));
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      own_ = nullptr;
      failure = fmt::format("cudaMalloc of the {} byte receive buffer failed: {}", bytes, cudaGetErrorString(status));
    } else {
      own_bytes_ = bytes;
    }
  }
  if (own_ != nullptr) {
    const bool any_other_process =
        std::any_of(same_process_.begin(), same_process_.end(), [](bool same) { return !same; });
    const cudaError_t status = any_other_process ? cudaIpcGetMemHandle(&mine.handle, own_) : cudaSuccess;
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      failure = fmt::format("cudaIpcGetMemHandle failed: {}", cudaGetErrorString(status));
    }
  }
  mine.ok = failure.empty() ? 1 : 0;
  mine.address = reinterpret_cast<std::uint64_t>(own_);
  copy_text(mine.error, sizeof(mine.error), failure);
  const std::vector<BufferCard> cards = all_gather(mine, "the all-gather of every rank's receive buffer", stream);
  for (int r = 0; r < size_; ++r)
    if (cards[static_cast<std::size_t>(r)].ok == 0)
      throw OutOfMemory(fmt::format("{}: rank {} could not share its receive buffer: {}", what, r,
                                    cards[static_cast<std::size_t>(r)].error));
  for (PeerBuffer& p : peers_)
    if (p.opened) CUPLAN_DIST_CUDA_NOEXCEPT(cudaIpcCloseMemHandle(p.address));
  peers_.assign(static_cast<std::size_t>(size_), PeerBuffer{});
  for (int r = 0; r < size_; ++r) {
    PeerBuffer& p = peers_[static_cast<std::size_t>(r)];
    const BufferCard& c = cards[static_cast<std::size_t>(r)];
    p.device = peer_device_[static_cast<std::size_t>(r)];
    if (r == rank_) {
      p.address = own_;
    } else if (same_process_[static_cast<std::size_t>(r)]) {
      p.address = reinterpret_cast<void*>(c.address);
      const cudaError_t status = cudaDeviceEnablePeerAccess(p.device, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();
      else
        CUPLAN_DIST_CUDA(status);
    } else {
      CUPLAN_DIST_CUDA(cudaIpcOpenMemHandle(&p.address, c.handle, cudaIpcMemLazyEnablePeerAccess));
      p.opened = true;
    }
  }
}

void PeerTable::barrier(cudaStream_t stream) {
  CUPLAN_COMM_CHECK(*comm_,
                    ncclAllReduce(barrier_word_, barrier_word_, 1, ncclInt32, ncclSum, comm_->live(what_), stream));
}

void PeerTable::release() noexcept {
  for (PeerBuffer& p : peers_)
    if (p.opened) CUPLAN_DIST_CUDA_NOEXCEPT(cudaIpcCloseMemHandle(p.address));
  peers_.clear();
  if (own_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(own_));
  own_ = nullptr;
  own_bytes_ = 0;
  if (barrier_word_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(barrier_word_));
  barrier_word_ = nullptr;
}

void enqueue_copy(const BoxTransfer& t, const void* src, int src_device, void* dst, int dst_device,
                  std::size_t element_bytes, cudaStream_t stream) {
  const auto es = element_bytes;
  const auto* s = static_cast<const char*>(src) + static_cast<std::size_t>(t.src_offset) * es;
  auto* d = static_cast<char*>(dst) + static_cast<std::size_t>(t.dst_offset) * es;
  const auto width = static_cast<std::size_t>(t.n[2]) * es;
  switch (t.dims()) {
    case 1:
      CUPLAN_DIST_CUDA(cudaMemcpyAsync(d, s, width, cudaMemcpyDefault, stream));
      return;
    case 2:
      CUPLAN_DIST_CUDA(cudaMemcpy2DAsync(d, static_cast<std::size_t>(t.dst_stride[1]) * es, s,
                                         static_cast<std::size_t>(t.src_stride[1]) * es, width,
                                         static_cast<std::size_t>(t.n[1]), cudaMemcpyDefault, stream));
      return;
    default: {
      cudaMemcpy3DPeerParms p{};
      p.srcPtr = make_cudaPitchedPtr(const_cast<char*>(s), static_cast<std::size_t>(t.src_stride[1]) * es, width,
                                     static_cast<std::size_t>(t.src_rows));
      p.dstPtr = make_cudaPitchedPtr(d, static_cast<std::size_t>(t.dst_stride[1]) * es, width,
                                     static_cast<std::size_t>(t.dst_rows));
      p.srcDevice = src_device;
      p.dstDevice = dst_device;
      p.extent = make_cudaExtent(width, static_cast<std::size_t>(t.n[1]), static_cast<std::size_t>(t.n[0]));
      CUPLAN_DIST_CUDA(cudaMemcpy3DPeerAsync(&p, stream));
    }
  }
}

}  // namespace cuplan::detail::dist
