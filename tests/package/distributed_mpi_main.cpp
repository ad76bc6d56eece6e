// SPDX-License-Identifier: Apache-2.0
// Consumer of an installed cuplan's MPI bootstrap (cuplan/distributed_mpi.hpp, header-only; the program links MPI,
// cuplan does not), run under mpiexec. Every rank checks its node-local rank and that rank 0's NCCL id reached it;
// without a GPU the communicator is NotSupported on every rank, with one GPU per rank it has MPI's rank and size.
// Exits 0 on every rank when every check holds.
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed_mpi.hpp>

#ifdef FMT_VERSION
#error "cuplan/distributed_mpi.hpp includes fmt"
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    std::printf("rank %d: %s: %s\n", rank, ok ? "ok" : "FAILED", what);
    failures += ok ? 0 : 1;
  };
  expect(cuplan::mpi::node_local_rank(MPI_COMM_WORLD) == rank, "node-local rank (one host)");
  const auto id = cuplan::mpi::broadcast_unique_id(MPI_COMM_WORLD);
  auto from_zero = id;
  MPI_Bcast(from_zero.data(), static_cast<int>(from_zero.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  expect(from_zero == id, "rank 0's NCCL id on every rank");
  if (cuplan::cuda_device_count() == 0) {
    bool refused = false;
    try {
      (void)cuplan::mpi::communicator(MPI_COMM_WORLD);
    } catch (const cuplan::NotSupported& error) {
      refused = std::string(error.what()).find("CUDA") != std::string::npos;
    } catch (const std::exception& error) {
      std::printf("rank %d: another error: %s\n", rank, error.what());
    }
    expect(refused, "without a GPU the communicator is NotSupported");
  } else if (cuplan::cuda_device_count() >= size) {
    const cuplan::Communicator comm(MPI_COMM_WORLD, cuplan::mpi::default_device(MPI_COMM_WORLD));
    expect(comm.rank() == rank && comm.size() == size && comm.device() == cuplan::Device::cuda(rank),
           "a communicator with MPI's rank and size, on the node-local GPU");
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
