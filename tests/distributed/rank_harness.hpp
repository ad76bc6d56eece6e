// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the Redistribute and DistributedMatmul tests: GPU-count gating, ranks as threads of this process, ranks
// as child processes of this test binary (one GPU each, the NCCL unique id passed through a file), and the walk over
// a box's elements with their indices in a global host array and in one rank's local array (and the copy on it).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/distributed.hpp"
#include "support/test_support.hpp"

#define CUPLAN_REQUIRE_GPUS(n)                                                      \
  do {                                                                              \
    CUPLAN_REQUIRE_GPU();                                                           \
    const int found_ = cuplan::cuda_device_count();                                 \
    if (found_ < (n)) GTEST_SKIP() << "needs " << (n) << " GPUs, found " << found_; \
  } while (0)

#define CUPLAN_HARNESS_CUDA(expr)                                                                                  \
  do {                                                                                                             \
    const cudaError_t status_ = (expr);                                                                            \
    if (status_ != cudaSuccess) throw std::runtime_error(std::string(#expr) + ": " + cudaGetErrorString(status_)); \
  } while (0)

namespace cuplan::testing {

/// One communicator per GPU 0..n-1, all in this process.
inline std::vector<Communicator> local_comms(int n) {
  std::vector<int> devices(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) devices[static_cast<std::size_t>(i)] = i;
  return Communicator::local_all(devices);
}

/// Runs fn(rank, comm) on one thread per communicator; every exception is kept, the first rethrown.
inline void on_ranks(std::vector<Communicator>& comms, const std::function<void(int, Communicator&)>& fn) {
  std::vector<std::thread> threads;
  std::mutex m;
  std::exception_ptr error;
  for (int r = 0; r < static_cast<int>(comms.size()); ++r)
    threads.emplace_back([&, r] {
      try {
        CUPLAN_HARNESS_CUDA(cudaSetDevice(comms[static_cast<std::size_t>(r)].device().index()));
        fn(r, comms[static_cast<std::size_t>(r)]);
      } catch (...) {
        std::lock_guard lock(m);
        if (!error) error = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

/// True when every pair of GPUs 0..n-1 has peer access (copy engines can run in one process).
inline bool peers_reachable(int n) {
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      int can = a == b ? 1 : 0;
      if (a != b) CUPLAN_HARNESS_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) return false;
    }
  return true;
}

/// Calls visit(global_index, local_index) for every element of `box` (up to three axes): the row-major indices of the
/// element in the global array of `global` extents and in the box's local array.
template <class Visit>
void for_each_box_element(const DistributedBox& box, const std::vector<std::int64_t>& global, const Visit& visit) {
  std::array<std::int64_t, 3> lo{0, 0, 0}, n{1, 1, 1}, g{1, 1, 1};
  for (std::size_t d = 0; d < global.size(); ++d) {
    lo[d] = box.offset[d];
    n[d] = box.extent[d];
    g[d] = global[d];
  }
  for (std::int64_t i = 0; i < n[0]; ++i)
    for (std::int64_t j = 0; j < n[1]; ++j)
      for (std::int64_t k = 0; k < n[2]; ++k)
        visit(static_cast<std::size_t>(((lo[0] + i) * g[1] + lo[1] + j) * g[2] + lo[2] + k),
              static_cast<std::size_t>((i * n[1] + j) * n[2] + k));
}

/// Row-major copy, element by element (`bytes` each), between a global array of `global` extents and the local
/// array of `box` (up to three axes).
inline void box_bytes(const DistributedBox& box, const std::vector<std::int64_t>& global, std::size_t bytes,
                      const unsigned char* from, unsigned char* to, bool to_local) {
  for_each_box_element(box, global, [&](std::size_t gi, std::size_t li) {
    std::memcpy(to + (to_local ? li : gi) * bytes, from + (to_local ? gi : li) * bytes, bytes);
  });
}

/// Ranks as processes. The parent test calls run_as_processes(filter, n): n children re-run this binary with only
/// `child_filter` selected and CUPLAN_DIST_RANK/SIZE/ID_FILE set. The child test calls child_communicator(), which
/// skips (returns nothing) outside such a child.
inline void run_as_processes(const char* child_filter, int size) {
  std::string leaf = "cuplan_dist_";
  leaf += std::to_string(getpid());
  const auto dir = std::filesystem::temp_directory_path() / leaf;
  std::filesystem::create_directories(dir);
  const auto id_file = (dir / "nccl_id").string();
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--gtest_filter=";
  filter += child_filter;
  std::vector<pid_t> children;
  for (int r = 0; r < size; ++r) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      setenv("CUPLAN_DIST_RANK", std::to_string(r).c_str(), 1);
      setenv("CUPLAN_DIST_SIZE", std::to_string(size).c_str(), 1);
      setenv("CUPLAN_DIST_ID_FILE", id_file.c_str(), 1);
      execl(self.c_str(), self.c_str(), filter.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    children.push_back(pid);
  }
  for (int r = 0; r < size; ++r) {
    int status = 0;
    waitpid(children[static_cast<std::size_t>(r)], &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank " << r << " failed (status " << status << ")";
  }
  std::filesystem::remove_all(dir);
}

/// In a child of run_as_processes: joins the communicator (rank 0 writes the unique id, the others wait for it).
inline std::optional<Communicator> child_communicator() {
  const char* rank_env = std::getenv("CUPLAN_DIST_RANK");
  if (rank_env == nullptr) return std::nullopt;
  const int rank = std::atoi(rank_env);
  const int size = std::atoi(std::getenv("CUPLAN_DIST_SIZE"));
  const std::filesystem::path file = std::getenv("CUPLAN_DIST_ID_FILE");
  Communicator::UniqueId id{};
  if (rank == 0) {
    id = Communicator::unique_id();
    std::filesystem::path tmp = file;
    tmp += ".tmp";
    std::ofstream(tmp, std::ios::binary).write(id.data(), static_cast<std::streamsize>(id.size()));
    std::filesystem::rename(tmp, file);  // readers never see a partial id
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(file)) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("rank 0 never wrote the unique id");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::ifstream(file, std::ios::binary).read(id.data(), static_cast<std::streamsize>(id.size()));
  }
  Communicator comm = Communicator::from_unique_id(id, rank, size, Device::cuda(rank));
  CUPLAN_HARNESS_CUDA(cudaSetDevice(rank));  // the test's own copies and memsets run on this rank's device
  return comm;
}

}  // namespace cuplan::testing
