// The process-wide store of tuning choices (plan/tuning_store.hpp).

#include "plan/tuning_store.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <ostream>
#include <sstream>
#include <tuple>
#include <vector>

namespace cuplan::detail {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // kind, problem, context

std::mutex g_mutex;
std::map<Key, std::string> g_entries;

std::string clean(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return text;
}

}  // namespace

std::optional<std::string> tuning_lookup(const std::string& kind, const std::string& problem,
                                         const std::string& context, std::string* stale) {
  std::lock_guard lock(g_mutex);
  auto it = g_entries.find({kind, clean(problem), clean(context)});
  if (it != g_entries.end()) return it->second;
  if (stale != nullptr) {
    for (const auto& [key, choice] : g_entries) {
      if (std::get<0>(key) == kind && std::get<1>(key) == clean(problem)) {
        *stale = std::get<2>(key);
        break;
      }
    }
  }
  return std::nullopt;
}

void tuning_record(const std::string& kind, const std::string& problem, const std::string& context,
                   const std::string& choice) {
  std::lock_guard lock(g_mutex);
  g_entries[{kind, clean(problem), clean(context)}] = clean(choice);
}

void write_tuning_entries(std::ostream& out) {
  std::lock_guard lock(g_mutex);
  for (const auto& [key, choice] : g_entries)
    out << "entry\t" << std::get<0>(key) << '\t' << std::get<1>(key) << '\t' << std::get<2>(key) << '\t' << choice
        << '\n';
}

bool read_tuning_entry(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) fields.push_back(field);
  if (fields.size() != 5 || fields[0] != "entry") return false;
  std::lock_guard lock(g_mutex);
  g_entries[{fields[1], fields[2], fields[3]}] = fields[4];
  return true;
}

}  // namespace cuplan::detail
