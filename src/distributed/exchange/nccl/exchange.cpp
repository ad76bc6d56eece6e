// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/nccl/exchange.hpp"

#include <nccl.h>

#include <stdexcept>

#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/comm_state.hpp"
#include "distributed/exchange/nccl/nccl_check.hpp"

namespace cuplan::detail::dist {

void exchange(Communicator::State& comm, int self, const void* send, std::span<const Transfer> sends, void* recv,
              std::span<const Transfer> recvs, cudaStream_t stream) {
  const auto* src = static_cast<const char*>(send);
  auto* dst = static_cast<char*>(recv);
  const Transfer* to_self = nullptr;
  const Transfer* from_self = nullptr;
  for (const Transfer& t : sends)
    if (t.peer == self) to_self = &t;
  for (const Transfer& t : recvs)
    if (t.peer == self) from_self = &t;
  if ((to_self == nullptr) != (from_self == nullptr) || (to_self && to_self->bytes != from_self->bytes))
    throw std::logic_error("exchange: the piece a rank keeps differs between its send and receive lists");
  if (to_self != nullptr && to_self->bytes > 0)
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(dst + from_self->offset, src + to_self->offset, to_self->bytes,
                                     cudaMemcpyDeviceToDevice, stream));
  if (sends.size() + recvs.size() == (to_self ? 2u : 0u)) return;
  ncclComm_t live = comm.live("exchange");
  CUPLAN_NCCL_CHECK(ncclGroupStart());
  // The group must be closed even when a call inside fails, or NCCL stays in group mode on this thread.
  try {
    for (const Transfer& t : sends)
      if (t.peer != self) CUPLAN_COMM_CHECK(comm, ncclSend(src + t.offset, t.bytes, ncclUint8, t.peer, live, stream));
    for (const Transfer& t : recvs)
      if (t.peer != self) CUPLAN_COMM_CHECK(comm, ncclRecv(dst + t.offset, t.bytes, ncclUint8, t.peer, live, stream));
  } catch (...) {
    CUPLAN_NCCL_CHECK_NOEXCEPT(ncclGroupEnd());
    throw;
  }
  CUPLAN_COMM_CHECK(comm, ncclGroupEnd());
}

}  // namespace cuplan::detail::dist
