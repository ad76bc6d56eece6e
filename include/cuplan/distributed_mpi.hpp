// SPDX-License-Identifier: Apache-2.0
#pragma once
// Communicators from MPI communicators, for codes that run one process per GPU under mpirun (docs/distributed.md).
// Header-only and included only by code that includes MPI itself: cuplan never links MPI. The application links
// MPI (CMake: find_package(MPI) and MPI::MPI_CXX) and calls these between MPI_Init and MPI_Finalize.

#include <mpi.h>

#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "cuplan/device.hpp"
#include "cuplan/distributed.hpp"
#include "cuplan/errors.hpp"

namespace cuplan {
namespace detail {

/// MPI_Comm is the communicator type the constrained Communicator constructor takes.
template <>
inline constexpr bool is_mpi_comm_v<MPI_Comm> = true;

/// A failing MPI call as a LibraryError with library "MPI" (only where the communicator returns errors: under MPI's
/// default handler a failing call ends the program before this is reached).
inline void check_mpi(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(status, text.data(), &length);
  throw LibraryError("MPI", call, status, "MPI error",
                     std::string("MPI call failed: ") + call + " returned " + std::to_string(status) + ": " +
                         std::string(text.data(), static_cast<std::size_t>(length)));
}

}  // namespace detail

inline namespace CUPLAN_ABI_NAMESPACE {
namespace mpi {

/// This process's rank among the processes of `comm` on its host (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED).
/// Collective over `comm`.
inline int node_local_rank(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  detail::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
                    "MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED)");
  int rank = 0;
  const int status = MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  detail::check_mpi(status, "MPI_Comm_rank(node communicator)");
  return rank;
}

/// The GPU a process takes when none is named: its node-local rank modulo the devices it sees. NotSupported when
/// it sees none (as Device::check_valid). Collective over `comm`.
inline Device default_device(MPI_Comm comm) {
  const int local = node_local_rank(comm);
  const int devices = cuda_device_count();
  if (devices == 0)
    throw NotSupported(
        "no CUDA device: cuplan::mpi::default_device: expected at least one visible CUDA device, got 0 (node-local "
        "rank " +
        std::to_string(local) + ")");
  return Device::cuda(local % devices);
}

/// One NCCL unique id made by rank 0 of `comm` and broadcast to every rank (MPI_Bcast). Collective over `comm`. If
/// rank 0 cannot make it, every rank raises: rank 0 the NCCL error, the others a LibraryError naming rank 0.
inline Communicator::UniqueId broadcast_unique_id(MPI_Comm comm) {
  int rank = 0;
  detail::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank(comm)");
  // One byte of status before the id, so that a failure on rank 0 reaches every rank instead of a hang.
  std::array<char, 1 + Communicator::unique_id_bytes> message{};
  std::exception_ptr failure;
  if (rank == 0) {
    try {
      const Communicator::UniqueId id = Communicator::unique_id();
      message[0] = 1;
      std::memcpy(message.data() + 1, id.data(), id.size());
    } catch (...) {
      failure = std::current_exception();
    }
  }
  detail::check_mpi(MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, comm),
                    "MPI_Bcast(unique id)");
  if (failure) std::rethrow_exception(failure);
  if (message[0] != 1)
    throw LibraryError("NCCL", "ncclGetUniqueId", 0, "failed on rank 0",
                       "cuplan::mpi::broadcast_unique_id: rank 0 could not make a NCCL unique id (its error says why)");
  Communicator::UniqueId id{};
  std::memcpy(id.data(), message.data() + 1, id.size());
  return id;
}

/// Joins a Communicator over the processes of `comm`, with the same rank and size, on `device`. Collective over
/// `comm` (every rank calls it at the same time). The same as `Communicator(comm, device)`.
inline Communicator communicator(MPI_Comm comm, Device device) {
  int rank = 0;
  int size = 0;
  detail::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank(comm)");
  detail::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size(comm)");
  const Communicator::UniqueId id = broadcast_unique_id(comm);
  return Communicator::from_unique_id(id, rank, size, device);
}

/// As communicator(comm, device) on default_device(comm): the usual one process per GPU of each host.
inline Communicator communicator(MPI_Comm comm) {
  return communicator(comm, default_device(comm));
}

}  // namespace mpi
}  // namespace CUPLAN_ABI_NAMESPACE

namespace detail {
template <>
inline Communicator join_mpi<MPI_Comm>(MPI_Comm comm, Device device) {
  return mpi::communicator(comm, device);
}
}  // namespace detail

}  // namespace cuplan
