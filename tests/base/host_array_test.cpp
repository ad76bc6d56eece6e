// SPDX-License-Identifier: Apache-2.0
// The library's host scratch (base/host_array.hpp): a request larger than the host's memory and swap is an
// OutOfMemory naming the buffer, the bytes and the host's capacity, before any allocation. On a host that
// overcommits, the allocation itself would succeed and zeroing it would end the process.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "base/host_array.hpp"

namespace cuplan::detail {
namespace {

TEST(HostArray, ARequestBeyondTheHostsMemoryAndSwapIsOutOfMemoryBeforeAllocating) {
  const std::uint64_t capacity = host_memory_capacity();
  if (capacity == 0) GTEST_SKIP() << "this host does not report its memory";
  ASSERT_LT(capacity, std::numeric_limits<std::size_t>::max() / 2);
  const auto beyond = static_cast<std::size_t>(capacity) + 4096;
  try {
    HostArray<char> array(beyond, "test scratch");
    FAIL() << "allocated " << beyond << " bytes, more than the host's " << capacity;
  } catch (const OutOfMemory& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("test scratch"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(beyond) + " bytes of host memory"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(capacity) + " bytes of memory and swap"), std::string::npos) << message;
  }
  // Requests within it still allocate, zeroed.
  const HostArray<std::uint32_t> small(1000, "test scratch");
  ASSERT_EQ(small.size(), 1000u);
  for (std::size_t i = 0; i < small.size(); ++i) ASSERT_EQ(small[i], 0u);
}

}  // namespace
}  // namespace cuplan::detail
