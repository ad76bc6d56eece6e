// SPDX-License-Identifier: Apache-2.0
#pragma once
// Ranks as processes for the distributed benchmarks (--mode processes): the bench starts itself once per GPU (fork
// and exec, so that every rank starts CUDA and NCCL fresh, as under mpirun), rank 0's NCCL unique id reaches the
// others through a file, and every rank writes named series of numbers that the parent reads back.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuplan/distributed.hpp>

namespace bench {

/// One rank's results: series of numbers by key (a size, a case) and name (what was timed).
using Series = std::map<std::string, std::map<std::string, std::vector<double>>>;

/// In a rank started by launch_ranks: its rank, the rank count and the folder it shares with the parent.
struct ChildRank {
  int rank = 0;
  int size = 0;
  std::filesystem::path dir;
};

/// This process's place when launch_ranks started it; nothing in the parent.
inline std::optional<ChildRank> child_rank() {
  const char* rank = std::getenv("CUPLAN_BENCH_RANK");
  const char* size = std::getenv("CUPLAN_BENCH_SIZE");
  const char* dir = std::getenv("CUPLAN_BENCH_DIR");
  if (rank == nullptr || size == nullptr || dir == nullptr) return std::nullopt;
  return ChildRank{std::atoi(rank), std::atoi(size), dir};
}

/// Joins the children's communicator on GPU `rank`: rank 0 makes the unique id and writes it (renamed into place, so
/// that no reader sees part of it); the others wait for it, two minutes at most.
inline cuplan::Communicator join_children(const ChildRank& child) {
  const auto id_file = child.dir / "nccl_id";
  cuplan::Communicator::UniqueId id{};
  if (child.rank == 0) {
    id = cuplan::Communicator::unique_id();
    auto tmp = id_file;
    tmp += ".tmp";
    std::ofstream(tmp, std::ios::binary).write(id.data(), static_cast<std::streamsize>(id.size()));
    std::filesystem::rename(tmp, id_file);
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!std::filesystem::exists(id_file)) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "rank %d: rank 0 never wrote the unique id\n", child.rank);
        std::exit(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::ifstream(id_file, std::ios::binary).read(id.data(), static_cast<std::streamsize>(id.size()));
  }
  return cuplan::Communicator::from_unique_id(id, child.rank, child.size, cuplan::Device::cuda(child.rank));
}

/// Writes this rank's series where launch_ranks reads them, as "key name count values..." lines (keys and names
/// without spaces). False when the file could not be written.
inline bool write_series(const ChildRank& child, const Series& series) {
  std::ofstream out(child.dir / ("rank" + std::to_string(child.rank) + ".txt"));
  for (const auto& [key, named] : series)
    for (const auto& [name, values] : named) {
      out << key << ' ' << name << ' ' << values.size();
      for (double v : values) out << ' ' << v;
      out << '\n';
    }
  return out.good();
}

inline Series read_series(const std::filesystem::path& file) {
  Series series;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    std::string key, name;
    std::size_t count = 0;
    is >> key >> name >> count;
    std::vector<double> values(count);
    for (double& v : values) is >> v;
    series[key][name] = std::move(values);
  }
  return series;
}

/// The value of --mode (threads, processes or both); any other value ends the program with status 2.
inline std::string rank_mode(const std::string& value) {
  if (value != "threads" && value != "processes" && value != "both") {
    std::fprintf(stderr, "--mode: expected threads, processes or both, got %s\n", value.c_str());
    std::exit(2);
  }
  return value;
}

/// The program's arguments as the children get them (parsing may change argv in place): a null-terminated copy.
class ChildArgs {
 public:
  ChildArgs(int argc, char** argv) : copies_(argv, argv + argc) {
    for (std::string& s : copies_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  char** argv() noexcept { return pointers_.data(); }

 private:
  std::vector<std::string> copies_;
  std::vector<char*> pointers_;
};

/// Starts `size` ranks, each this executable again with `argv` (CUPLAN_BENCH_RANK/SIZE/DIR set), waits for all and
/// returns their series in rank order. Exits the program when a rank fails.
inline std::vector<Series> launch_ranks(int size, char** argv) {
  std::string leaf = "cuplan_dist_bench_";
  leaf += std::to_string(getpid());
  leaf += '_';
  leaf += std::to_string(size);
  const auto dir = std::filesystem::temp_directory_path() / leaf;
  std::filesystem::create_directories(dir);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::fflush(nullptr);  // nothing buffered here is printed twice by a child
  std::vector<pid_t> children;
  for (int r = 0; r < size; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      std::exit(1);
    }
    if (pid == 0) {
      setenv("CUPLAN_BENCH_RANK", std::to_string(r).c_str(), 1);
      setenv("CUPLAN_BENCH_SIZE", std::to_string(size).c_str(), 1);
      setenv("CUPLAN_BENCH_DIR", dir.c_str(), 1);
      execv(self.c_str(), argv);
      _exit(127);
    }
    children.push_back(pid);
  }
  bool ok = true;
  for (int r = 0; r < size; ++r) {
    int status = 0;
    waitpid(children[static_cast<std::size_t>(r)], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "rank %d (process) failed, status %d\n", r, status);
      ok = false;
    }
  }
  if (!ok) std::exit(1);
  std::vector<Series> out;
  for (int r = 0; r < size; ++r) out.push_back(read_series(dir / ("rank" + std::to_string(r) + ".txt")));
  std::filesystem::remove_all(dir);
  return out;
}

}  // namespace bench
