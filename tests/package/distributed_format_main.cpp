// SPDX-License-Identifier: Apache-2.0
// Consumer of an installed cuplan's distributed formatters (cuplan/distributed_format.hpp, opt-in): the enums by
// name, a box by its offset and extent, and the core types' formatters beside them. Exits 0 when every check holds.
#include <cstdio>
#include <string>

#include <cuplan/distributed_format.hpp>

namespace cp = cuplan;

int main() {
  int failures = 0;
  auto expect = [&](const std::string& got, const char* want) {
    const bool ok = got == want;
    std::printf("%s: \"%s\" (expected \"%s\")\n", ok ? "ok" : "FAILED", got.c_str(), want);
    failures += ok ? 0 : 1;
  };
  expect(fmt::format("{}", cp::ExchangeMethod::nccl), "nccl");
  expect(fmt::format("{}/{}", cp::Decomposition::slab, cp::InputLayout::natural), "slab/natural");
  expect(fmt::format("{:<16}|", cp::DistributedMatmulAlgorithm::summa), "summa           |");
  expect(fmt::format("{}", cp::DistributedBox{{0, 8, 0}, {16, 8, 16}}), "box offset [0, 8, 0] extent [16, 8, 16]");
  expect(fmt::format("{}", cp::c64), "c64");  // cuplan/format.hpp comes with it
  return failures == 0 ? 0 : 1;
}
