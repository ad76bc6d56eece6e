// SPDX-License-Identifier: Apache-2.0
// Communicators from MPI communicators (cuplan/distributed_mpi.hpp), as an MPI code calls them: this program runs
// under mpiexec, one process per rank. Without a GPU the NCCL part raises a typed error on every rank; with a GPU per
// rank, the communicator has MPI's rank and size and a DistributedFFT round trip over it returns its input.
#include <cuplan/distributed_mpi.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "support/test_support.hpp"

namespace {

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

TEST(MpiCommunicator, NodeLocalRankCountsTheProcessesOfThisHost) {
  // mpiexec starts every process of this test on one host.
  EXPECT_EQ(cuplan::mpi::node_local_rank(MPI_COMM_WORLD), world_rank());
}

TEST(MpiCommunicator, EveryRankGetsRankZerosUniqueId) {
  const auto first = cuplan::mpi::broadcast_unique_id(MPI_COMM_WORLD);
  const auto second = cuplan::mpi::broadcast_unique_id(MPI_COMM_WORLD);
  EXPECT_NE(first, second) << "two calls made the same id";
  std::vector<char> all(first.size() * static_cast<std::size_t>(world_size()));
  ASSERT_EQ(MPI_Allgather(first.data(), static_cast<int>(first.size()), MPI_CHAR, all.data(),
                          static_cast<int>(first.size()), MPI_CHAR, MPI_COMM_WORLD),
            MPI_SUCCESS);
  for (int r = 0; r < world_size(); ++r)
    EXPECT_TRUE(std::equal(first.begin(), first.end(), all.begin() + static_cast<std::ptrdiff_t>(r * first.size())))
        << "rank " << r << " got another id";
}

TEST(MpiCommunicator, JoinsWithTheMpiRanksOrRaisesOnEveryRank) {
  if (!cuplan::cuda_available()) {
    // No GPU: the default device and an explicit one are NotSupported on every rank, after the collective id
    // broadcast, so no rank waits for another.
    EXPECT_THROW((void)cuplan::mpi::communicator(MPI_COMM_WORLD), cuplan::NotSupported);
    EXPECT_THROW((void)cuplan::Communicator(MPI_COMM_WORLD, cuplan::Device::cuda(0)), cuplan::NotSupported);
    return;
  }
  if (cuplan::cuda_device_count() < world_size())
    GTEST_SKIP() << "needs one GPU per rank: " << world_size() << " ranks, " << cuplan::cuda_device_count()
                 << " GPU(s)";
  cuplan::Communicator comm(MPI_COMM_WORLD, cuplan::mpi::default_device(MPI_COMM_WORLD));
  EXPECT_EQ(comm.rank(), world_rank());
  EXPECT_EQ(comm.size(), world_size());
  EXPECT_EQ(comm.device(), cuplan::Device::cuda(world_rank()));

  // Forward and back over the MPI ranks (the inverse scaled by 1/N): the input returns, compared in float64.
  const cuplan::Shape g{12, 10, 8};
  const cuplan::Stream stream(comm.device());
  const cuplan::DistributedFFTOptions o{.normalization = cuplan::Normalization::inverse, .stream = stream.ref()};
  const auto boxes = cuplan::DistributedFFT::boxes(comm, g, cuplan::c128, o);
  auto x = cuplan::testing::random_vector<std::complex<double>>(static_cast<std::size_t>(boxes.input.numel()));
  const auto operand =
      cuplan::Tensor::wrap(cuplan::TensorView(x.data(), boxes.input.shape())).to(comm.device(), stream.ref());
  cuplan::DistributedFFT forward(comm, g, operand, o);
  forward.plan();
  const cuplan::Tensor spectrum = forward.execute({.stream = stream.ref()});
  cuplan::DistributedFFT inverse(comm, g, spectrum, o);
  inverse.plan();
  const cuplan::Tensor back = inverse.execute({.direction = cuplan::Direction::inverse, .stream = stream.ref()})
                                  .to(cuplan::Device::cpu(), stream.ref());
  double err = 0;
  double norm = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    err += std::norm(back.data<std::complex<double>>()[i] - x[i]);
    norm += std::norm(x[i]);
  }
  EXPECT_LT(std::sqrt(err / norm), 1e-12);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (world_rank() != 0) {  // one report: rank 0's (every rank's failures still count below)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
