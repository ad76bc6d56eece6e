// SPDX-License-Identifier: Apache-2.0
// The process-wide store of tuning choices (plan/cache/tuning_store.hpp).

#include "plan/cache/tuning_store.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <ostream>
#include <sstream>
#include <tuple>

#include "base/log.hpp"

namespace cuplan::detail {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // kind, problem, context

std::mutex g_mutex;
std::map<Key, std::string> g_entries;

// The file has one entry per line with tab-separated fields: neither may occur inside a field.
std::string one_line(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return text;
}

void record_locked(const TuningEntry& e) {
  g_entries[{one_line(e.kind), one_line(e.problem), one_line(e.context)}] = one_line(e.choice);
}

}  // namespace

std::optional<std::string> tuning_lookup(const std::string& kind, const std::string& problem,
                                         const std::string& context, const char* who) {
  const std::string problem_line = one_line(problem), context_line = one_line(context);
  std::string stale;
  {
    std::lock_guard lock(g_mutex);
    if (auto it = g_entries.find({kind, problem_line, context_line}); it != g_entries.end()) return it->second;
    for (const auto& [key, choice] : g_entries) {
      if (std::get<0>(key) == kind && std::get<1>(key) == problem_line) {
        stale = std::get<2>(key);
        break;
      }
    }
  }
  if (!stale.empty())
    log(LogLevel::info, "{}: saved tuning for this problem ignored: it was made for {}, this is {}", who, stale,
        context_line);
  return std::nullopt;
}

void tuning_record(const TuningEntry& entry) {
  std::lock_guard lock(g_mutex);
  record_locked(entry);
}

void tuning_record_all(const std::vector<TuningEntry>& entries) {
  std::lock_guard lock(g_mutex);
  for (const TuningEntry& e : entries) record_locked(e);
}

void write_tuning_entries(std::ostream& out) {
  std::lock_guard lock(g_mutex);
  for (const auto& [key, choice] : g_entries)
    out << "entry\t" << std::get<0>(key) << '\t' << std::get<1>(key) << '\t' << std::get<2>(key) << '\t' << choice
        << '\n';
}

std::optional<TuningEntry> parse_tuning_entry(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) fields.push_back(field);
  if (fields.size() != 5 || fields[0] != "entry" || fields[1].empty() || fields[2].empty() || fields[3].empty() ||
      fields[4].empty())
    return std::nullopt;
  return TuningEntry{fields[1], fields[2], fields[3], fields[4]};
}

}  // namespace cuplan::detail
