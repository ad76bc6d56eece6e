// SPDX-License-Identifier: Apache-2.0
// Consumer of an installed cuplan that formats cuplan types: the fmt formatters are opt-in through
// cuplan/format.hpp, next to the umbrella header. Exits 0 when every formatted text is the documented one.
#include <cstdio>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/format.hpp>

namespace cp = cuplan;

int main() {
  int failures = 0;
  auto expect = [&](const std::string& got, const std::string& expected) {
    const bool ok = got == expected;
    std::printf("%s: \"%s\"%s%s%s\n", ok ? "ok" : "FAILED", got.c_str(), ok ? "" : " (expected \"",
                ok ? "" : expected.c_str(), ok ? "" : "\")");
    failures += ok ? 0 : 1;
  };
  std::vector<float> values(6, 0.0F);
  const cp::TensorView view(values.data(), {2, 3});
  expect(fmt::format("{}", view.dtype()), "f32");
  expect(fmt::format("{}", view.shape()), "[2, 3]");
  expect(fmt::format("{}", cp::Device::cpu()), "cpu");
  expect(fmt::format("{}", cp::MemorySpace::host_pinned), "host_pinned");
  expect(fmt::format("{}", cp::FFTType::r2c), "R2C");
  expect(fmt::format("{}", cp::Epilog::gelu_bias), "gelu_bias");
  expect(fmt::format("{}", cp::InvalidArgument("x: expected 1, got 2")), "InvalidArgument: x: expected 1, got 2");
  // The names alone need no formatter: cuplan/cuplan.hpp declares them.
  expect(std::string(cp::to_string(cp::Direction::inverse)), "inverse");
  return failures == 0 ? 0 : 1;
}
