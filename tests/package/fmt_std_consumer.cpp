// SPDX-License-Identifier: Apache-2.0
// A consumer that includes <fmt/std.h> next to cuplan and formats cuplan's errors and value types. fmt 10 and later
// format every std::exception in <fmt/std.h> through a partial specialization of fmt::formatter; cuplan's error
// formatters are full specializations, so the two never compete. With an fmt older than 10 (no such formatter in
// <fmt/std.h>) the program declares one of the same form itself, so that the clash is reproduced on any fmt.
// Exits 0 when every formatted string is the expected one.
#include <fmt/format.h>
#include <fmt/std.h>

#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>

#include <cuplan/cuplan.hpp>
#include <cuplan/format.hpp>

#if FMT_VERSION < 100000
// What fmt 10's <fmt/std.h> declares for every exception (there: what() through a string_view formatter).
template <class T, class Char>
struct fmt::formatter<T, Char, std::enable_if_t<std::is_base_of_v<std::exception, T>>> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <class FormatContext>
  auto format(const std::exception& error, FormatContext& ctx) const {
    return fmt::format_to(ctx.out(), "{}", error.what());
  }
};
#endif

namespace cp = cuplan;

namespace {
int failures = 0;

void expect_equal(const std::string& got, const std::string& expected) {
  const bool ok = got == expected;
  std::printf("%s: \"%s\"%s%s%s\n", ok ? "ok" : "FAILED", got.c_str(), ok ? "" : " (expected \"",
              ok ? "" : expected.c_str(), ok ? "" : "\")");
  failures += ok ? 0 : 1;
}
}  // namespace

int main() {
  std::printf("fmt %d, cuplan %s\n", FMT_VERSION, CUPLAN_VERSION_STRING);
  expect_equal(fmt::format("{}", cp::InvalidArgument("shape: expected 2, got 3")),
               "InvalidArgument: shape: expected 2, got 3");
  expect_equal(fmt::format("{}", cp::NotSupported("x")), "NotSupported: x");
  expect_equal(fmt::format("{}", cp::StateError("x")), "StateError: x");
  expect_equal(fmt::format("{}", cp::OrderingError("x")), "OrderingError: x");
  expect_equal(fmt::format("{}", cp::CallbackError("x", "prolog", "")), "CallbackError: x");
  expect_equal(fmt::format("{}", cp::TimeoutError("x")), "TimeoutError: x");
  // Through a reference to the base class: the most derived class is named.
  try {
    cp::copy(cp::TensorView(static_cast<float*>(nullptr), {0}), cp::TensorView(static_cast<float*>(nullptr), {1}));
    expect_equal("no exception", "an InvalidArgument");
  } catch (const cp::Error& error) {
    const std::string text = fmt::format("{}", error);
    expect_equal(text.substr(0, 17), "InvalidArgument: ");
  }
  // A standard exception still goes to fmt's own formatter (or, before fmt 10, to the declaration above).
  expect_equal(fmt::format("{}", std::runtime_error("plain")).find("plain") != std::string::npos ? "plain" : "?",
               "plain");
  expect_equal(fmt::format("{}", cp::c64), "c64");
  expect_equal(fmt::format("{}", cp::Direction::inverse), "inverse");
  expect_equal(fmt::format("{}", cp::Shape({64, 256})), "[64, 256]");
  return failures == 0 ? 0 : 1;
}
