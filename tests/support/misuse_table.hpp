// SPDX-License-Identifier: Apache-2.0
#pragma once
// Table-driven misuse tests: each row is one call, the exception type it must raise and fragments its message must
// contain (the operand, the expected and the actual value). A row that raises nothing, or another type, fails.

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "cuplan/errors.hpp"

namespace cuplan::testing {

enum class Expect { invalid_argument, not_supported, state_error };

struct MisuseRow {
  std::string name;  // gtest parameter name: letters, digits and underscores
  std::function<void()> call;
  Expect expect;
  std::vector<std::string> fragments;
};

/// How gtest prints a row (by its name): without it gtest prints the struct's raw bytes, padding included, which
/// valgrind reports as a read of uninitialised memory (scripts/valgrind.sh).
inline void PrintTo(const MisuseRow& row, std::ostream* os) {
  *os << row.name;
}

/// The exception type a row expects, by name (in Expect's order).
inline const char* expect_name(Expect e) {
  static constexpr const char* names[] = {"InvalidArgument", "NotSupported", "StateError"};
  const auto index = static_cast<std::size_t>(e);
  return index < std::size(names) ? names[index] : "?";
}

/// Runs the row's call; the message of the expected exception, or a failure description.
inline void check_row(const MisuseRow& row) {
  std::string message, got = "no exception";
  bool right_type = false;
  try {
    row.call();
  } catch (const InvalidArgument& e) {
    got = "InvalidArgument", message = e.what(), right_type = row.expect == Expect::invalid_argument;
  } catch (const NotSupported& e) {
    got = "NotSupported", message = e.what(), right_type = row.expect == Expect::not_supported;
  } catch (const StateError& e) {
    got = "StateError", message = e.what(), right_type = row.expect == Expect::state_error;
  } catch (const std::exception& e) {
    got = "another exception", message = e.what();
  }
  ASSERT_TRUE(right_type) << row.name << ": expected " << expect_name(row.expect) << ", got " << got << ": " << message;
  for (const std::string& part : row.fragments)
    EXPECT_NE(message.find(part), std::string::npos) << row.name << ": message lacks \"" << part << "\": " << message;
}

/// The one `Buffers` of a table, built on first use: the rows' calls run after the table is built, so the buffers
/// their views point into must outlive it.
template <class Buffers>
Buffers& table_buffers() {
  static Buffers buffers;
  return buffers;
}

/// A value of enumeration E that names none of its enumerators, for rows that pass a corrupt option.
template <class E>
E bad(int value) {
  return static_cast<E>(value);
}

inline std::string row_name(const ::testing::TestParamInfo<MisuseRow>& info) {
  return info.param.name;
}

}  // namespace cuplan::testing

/// A parameterized suite `Suite` of the rows `rows` returns: one test per row, named after it, run by check_row.
#define CUPLAN_MISUSE_SUITE(Suite, rows)                                          \
  class Suite : public ::testing::TestWithParam<::cuplan::testing::MisuseRow> {}; \
  TEST_P(Suite, RaisesTypedError) {                                               \
    ::cuplan::testing::check_row(GetParam());                                     \
  }                                                                               \
  INSTANTIATE_TEST_SUITE_P(Rows, Suite, ::testing::ValuesIn(rows), ::cuplan::testing::row_name)
