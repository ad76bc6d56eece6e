// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs one test of this test binary in a second process (fork + exec of /proc/self/exe), so that a test can show
// what a fresh process sees: nothing is shared but the files and the environment passed here.
//
// The child gets this process's environment without a tool's injection. compute-sanitizer checks only the test's
// own process (`--target-processes application-only`), yet under it the child waited at its first CUDA call until
// the time limit, also with CUDA_INJECTION64_PATH and the sanitizer's preload removed. Its environment also holds
// NVTX_INJECTION64_PATH naming its collection library, which the child's first NVTX range (cuplan names its phases
// with NVTX) would load, and the sanitizer's own NV_SANITIZER_* and process-injection variables. With all of them
// removed, the tuning tests' children run under each of the four tools (which one mattered was not isolated).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern char** environ;  // POSIX: declared by no standard header

namespace cuplan::testing {

namespace second_process_detail {

inline bool is_tool_injection(std::string_view entry) {
  for (const std::string_view prefix : {"CUDA_INJECTION64_PATH=", "NVTX_INJECTION64_PATH=", "NV_SANITIZER_",
                                        "NVIDIA_PROCESS_INJECTION", "NVIDIA-PROCESS-TRACKING"})
    if (entry.starts_with(prefix)) return true;
  return entry.starts_with("LD_PRELOAD=") &&
         (entry.find("sanitizer") != std::string_view::npos || entry.find("TreeLauncher") != std::string_view::npos);
}

/// This process's environment without a tool's injection, with `env` set on top.
inline std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (is_tool_injection(entry)) continue;
    bool overridden = false;
    for (const auto& [name, value] : env) overridden = overridden || entry.starts_with(name + "=");
    if (!overridden) out.emplace_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace second_process_detail

/// Runs `/proc/self/exe --gtest_filter=<test> --gtest_also_run_disabled_tests` with `env` added; returns the exit
/// status (-1 when it could not run or did not exit normally).
inline int run_second_process(const std::string& test, const std::vector<std::pair<std::string, std::string>>& env) {
  // Everything the child needs is built before fork: between fork and exec only async-signal-safe calls.
  const std::vector<std::string> environment = second_process_detail::child_environment(env);
  std::vector<char*> envp;
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::string program = "second_process", filter = "--gtest_filter=" + test,
              disabled = "--gtest_also_run_disabled_tests";
  char* const argv[] = {program.data(), filter.data(), disabled.data(), nullptr};
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace cuplan::testing
