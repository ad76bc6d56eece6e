// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/nccl/collectives.hpp"

#include <nccl.h>

#include <vector>

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/comm_state.hpp"
#include "distributed/exchange/nccl/nccl_check.hpp"

namespace cuplan::detail::dist {

void reduce_sum(Communicator::State& comm, const void* send, void* recv, std::size_t count, DType dtype, int root,
                cudaStream_t stream) {
  ncclDataType_t type = ncclFloat;
  switch (dtype.code()) {
    case DTypeCode::f16:
      type = ncclHalf;
      break;
    case DTypeCode::bf16:
      type = ncclBfloat16;
      break;
    case DTypeCode::f32:
      break;
    case DTypeCode::f64:
      type = ncclDouble;
      break;
    case DTypeCode::c64:
      count *= 2;
      break;
    case DTypeCode::c128:
      type = ncclDouble;
      count *= 2;
      break;
    default:
      throw NotSupported(
          fmt::format("a distributed reduction of {} elements (f16, bf16, f32, f64, c64, c128 only)", dtype.name()));
  }
  CUPLAN_COMM_CHECK(comm, ncclReduce(send, recv, count, type, ncclSum, root, comm.live("reduce_sum"), stream));
}

void connect_peers(Communicator::State& comm, const char* what, int self, std::span<const int> to,
                   std::span<const int> from, cudaStream_t stream) {
  void* scratch = nullptr;
  const std::size_t bytes = to.size() + from.size() + 1;
  CUPLAN_DIST_CUDA(cudaMalloc(&scratch, bytes));
  try {
    CUPLAN_DIST_CUDA(cudaMemsetAsync(scratch, 0, bytes, stream));
    auto* base = static_cast<unsigned char*>(scratch);
    PeerWait wait(comm, what, "the first message to and from each peer of the matrix product's exchanges");
    ncclComm_t live = comm.live(what);
    CUPLAN_NCCL_CHECK(ncclGroupStart());
    try {
      for (std::size_t i = 0; i < to.size(); ++i)
        if (to[i] != self) CUPLAN_COMM_CHECK(comm, ncclSend(base + i, 1, ncclUint8, to[i], live, stream));
      for (std::size_t i = 0; i < from.size(); ++i)
        if (from[i] != self)
          CUPLAN_COMM_CHECK(comm, ncclRecv(base + to.size() + i, 1, ncclUint8, from[i], live, stream));
    } catch (...) {
      CUPLAN_NCCL_CHECK_NOEXCEPT(ncclGroupEnd());
      throw;
    }
    CUPLAN_COMM_CHECK(comm, ncclGroupEnd());
    wait.synchronize(stream);
  } catch (...) {
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(scratch));
    throw;
  }
  CUPLAN_DIST_CUDA(cudaFree(scratch));
}

void connect_reductions(Communicator::State& comm, const char* what, std::span<const int> roots, DType dtype,
                        cudaStream_t stream) {
  void* scratch = nullptr;
  CUPLAN_DIST_CUDA(cudaMalloc(&scratch, 2 * dtype.size()));
  try {
    CUPLAN_DIST_CUDA(cudaMemsetAsync(scratch, 0, 2 * dtype.size(), stream));
    PeerWait wait(comm, what, "the first reduction onto each root of the matrix product");
    for (int root : roots)
      reduce_sum(comm, scratch, static_cast<char*>(scratch) + dtype.size(), 1, dtype, root, stream);
    wait.synchronize(stream);
  } catch (...) {
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaFree(scratch));
    throw;
  }
  CUPLAN_DIST_CUDA(cudaFree(scratch));
}

}  // namespace cuplan::detail::dist
