// SPDX-License-Identifier: Apache-2.0
#pragma once
// The NCCL collectives of the distributed matrix product, in cuplan's dtypes: a sum onto one rank (complex values
// as pairs of reals), and one small message to and from given peers, sent in plan() so that NCCL makes its
// connections there and execute only enqueues.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

#include "cuplan/distributed.hpp"
#include "cuplan/dtype.hpp"

namespace cuplan::detail::dist {

/// ncclReduce with ncclSum of `count` elements of `dtype` (f16, bf16, f32, f64, c64, c128) onto `root`; `recv`
/// matters on the root only. NotSupported for other dtypes.
void reduce_sum(Communicator::State& comm, const void* send, void* recv, std::size_t count, DType dtype, int root,
                cudaStream_t stream);

/// One byte to each of `to` and from each of `from` (ranks other than `self`), as one group; blocks until done (a
/// PeerWait of `what`).
void connect_peers(Communicator::State& comm, const char* what, int self, std::span<const int> to,
                   std::span<const int> from, cudaStream_t stream);

/// One one-element reduction of `dtype` onto every root in `roots`, in order, so that NCCL connects and loads the
/// kernels of reduce_sum here; blocks until done (a PeerWait of `what`).
void connect_reductions(Communicator::State& comm, const char* what, std::span<const int> roots, DType dtype,
                        cudaStream_t stream);

}  // namespace cuplan::detail::dist
