#pragma once
// Runs one test of this test binary in a second process (fork + exec of /proc/self/exe), so that a test can show
// what a fresh process sees: nothing is shared but the files and the environment variables passed here.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace cuplan::testing {

/// Runs `/proc/self/exe --gtest_filter=<test> --gtest_also_run_disabled_tests` with `env` added; returns the exit
/// status (-1 when it could not run or did not exit normally).
inline int run_second_process(const std::string& test, const std::vector<std::pair<std::string, std::string>>& env) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    const std::string filter = "--gtest_filter=" + test;
    execl("/proc/self/exe", "second_process", filter.c_str(), "--gtest_also_run_disabled_tests",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace cuplan::testing
