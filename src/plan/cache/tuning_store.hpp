// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tuning choices kept for the process and persisted by tuning::save / load (cuplan/tuning.hpp): an operation
// records the choice its tuning made for a problem in a context (device name, compute capability, library
// version), and a later object of the same problem in the same context takes it instead of tuning again.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cuplan::detail {

/// One saved choice. `kind` names the operation ("matmul"); the other fields are that operation's text.
struct TuningEntry {
  std::string kind, problem, context, choice;
};

/// The saved choice for `problem` in `context`. When the store holds the problem only for other contexts (another
/// device or library version), the result is empty and an info log line "<who>: saved tuning ... ignored" names
/// the saved context and this one.
std::optional<std::string> tuning_lookup(const std::string& kind, const std::string& problem,
                                         const std::string& context, const char* who);
/// Records (or replaces) the choice for `problem` in `context`. Tabs and line breaks become spaces.
void tuning_record(const TuningEntry& entry);
/// Records every entry under one lock hold (tuning::load commits a whole file at once).
void tuning_record_all(const std::vector<TuningEntry>& entries);
/// Every entry as one "entry\t<kind>\t<problem>\t<context>\t<choice>" line.
void write_tuning_entries(std::ostream& out);
/// The entry of one line written by write_tuning_entries; empty when the line is not one.
std::optional<TuningEntry> parse_tuning_entry(const std::string& line);

}  // namespace cuplan::detail
