#pragma once
// Tuning choices kept for the process and persisted by tuning::save / load (cuplan/tuning.hpp): an operation
// records the choice its tuning made for a problem in a context (device name, compute capability, library
// version), and a later object of the same problem in the same context takes it instead of tuning again.

#include <iosfwd>
#include <optional>
#include <string>

namespace cuplan::detail {

/// The saved choice for `problem` in `context`. When only entries of other contexts exist, `stale` gets one of
/// their contexts (for the caller's log line) and the result is empty.
std::optional<std::string> tuning_lookup(const std::string& kind, const std::string& problem,
                                         const std::string& context, std::string* stale);
/// Records (or replaces) the choice for `problem` in `context`. Tabs and newlines are replaced by spaces.
void tuning_record(const std::string& kind, const std::string& problem, const std::string& context,
                   const std::string& choice);
/// Writes every entry as one "entry\t<kind>\t<problem>\t<context>\t<choice>" line.
void write_tuning_entries(std::ostream& out);
/// Takes one line written by write_tuning_entries; false when it is not one.
bool read_tuning_entry(const std::string& line);

}  // namespace cuplan::detail
