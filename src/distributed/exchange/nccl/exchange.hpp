// SPDX-License-Identifier: Apache-2.0
#pragma once
// One exchange step on the wire: grouped ncclSend/ncclRecv of packed pieces on the caller's stream.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

#include "cuplan/distributed.hpp"

namespace cuplan::detail::dist {

struct Transfer {
  int peer = 0;
  std::size_t offset = 0;  ///< bytes into the packed buffer
  std::size_t bytes = 0;
};

/// Sends each piece of `send` to its peer and receives each piece of `recv` from its peer, as one NCCL group on
/// `stream`. The piece a rank sends to itself is a device-to-device copy instead. The abort's error when `comm`
/// was aborted.
void exchange(Communicator::State& comm, int self, const void* send, std::span<const Transfer> sends, void* recv,
              std::span<const Transfer> recvs, cudaStream_t stream);

}  // namespace cuplan::detail::dist
