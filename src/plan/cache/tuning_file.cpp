// SPDX-License-Identifier: Apache-2.0
// tuning::save / load, one file for every operation: the choices each operation records in the tuning store
// (Matmul's autotune) and the named sections that backends register (FFTW's wisdom, fft/fftw/fftw_backend.cpp).
// The file knows no backend: a backend hands its sections in and takes them back (tuning_file.hpp).
//
// File format (text):
//   cuplan-tuning 1
//   entry<TAB>kind<TAB>problem<TAB>context<TAB>choice      (zero or more)
//   <section> <bytes>                                      (then exactly <bytes> bytes of the section and a newline;
//                                                           FFTW's: fftw-double, fftw-single)

#include "cuplan/tuning.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "plan/cache/tuning_file.hpp"
#include "plan/cache/tuning_store.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace tuning {
namespace {

constexpr std::string_view kHeader = "cuplan-tuning 1";

// The registered section providers, in registration order (static initialisation of the backends' files).
std::vector<detail::TuningSectionProvider>& providers() {
  static std::vector<detail::TuningSectionProvider> registered;
  return registered;
}

// The provider and index of section `name`; nullopt for a name no backend registered.
std::optional<std::pair<std::size_t, std::size_t>> find_section(std::string_view name) {
  const std::vector<detail::TuningSectionProvider>& all = providers();
  for (std::size_t p = 0; p < all.size(); ++p)
    for (std::size_t s = 0; s < all[p].names.size(); ++s)
      if (all[p].names[s] == name) return std::pair{p, s};
  return std::nullopt;
}

// "an 'fftw-double <bytes>' / 'fftw-single <bytes>' section" (what a line that is no entry may be).
std::string expected_sections() {
  std::string names;
  for (const detail::TuningSectionProvider& provider : providers())
    for (const std::string& name : provider.names)
      names += fmt::format("{}'{} <bytes>'", names.empty() ? "" : " / ", name);
  return names.empty() ? std::string("no section (no backend registers one in this build)")
                       : fmt::format("an {} section", names);
}

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// `path` empty: the tuning came from a string (load_from_string), and the message names no file.
[[noreturn]] void fail(const char* op, const std::string& path, const std::string& what) {
  if (path.empty()) throw InvalidArgument(fmt::format("tuning::{}: {}", op, what));
  throw InvalidArgument(fmt::format("tuning::{}: '{}': {}", op, path, what));
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("load", path, "is a directory, expected a tuning file");
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) fail("load", path, fmt::format("cannot open: {}", std::strerror(errno)));
  std::string text;
  char buffer[65536];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0;) text.append(buffer, got);
  if (std::ferror(file.get())) fail("load", path, fmt::format("cannot read: {}", std::strerror(errno)));
  return text;
}

// What a tuning file holds, parsed in full before anything is applied.
struct Contents {
  std::vector<detail::TuningEntry> entries;
  std::vector<std::vector<std::string>> sections;  ///< per provider, per section name (empty: not in the file)
};

Contents parse(const char* op, const std::string& path, const std::string& text) {
  Contents contents;
  for (const detail::TuningSectionProvider& provider : providers())
    contents.sections.emplace_back(provider.names.size());
  std::size_t at = 0;
  int line_number = 0;
  const auto next_line = [&]() {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    ++line_number;
    return line;
  };
  const auto shown = [](const std::string& line) { return line.size() > 60 ? line.substr(0, 60) + "..." : line; };
  const std::string header = next_line();
  if (header != kHeader)
    fail(op, path,
         fmt::format("not a cuplan tuning file: expected the first line '{}', got '{}'", kHeader, shown(header)));
  while (at < text.size()) {
    const std::string line = next_line();
    if (line.empty()) continue;
    if (line.starts_with("entry\t")) {
      auto entry = detail::parse_tuning_entry(line);
      if (!entry)
        fail(op, path,
             fmt::format("line {}: malformed entry: expected 'entry' and 4 non-empty tab-separated fields, got '{}'",
                         line_number, shown(line)));
      contents.entries.push_back(std::move(*entry));
      continue;
    }
    // A section: "<name> <bytes>", then the bytes and a newline.
    const std::size_t space = line.find(' ');
    const std::string name = line.substr(0, space);
    const auto section = space == std::string::npos ? std::nullopt : find_section(name);
    if (!section)
      fail(op, path,
           fmt::format("line {}: expected an entry or {}, got '{}'", line_number, expected_sections(), shown(line)));
    std::size_t bytes = 0;
    const char* first = line.data() + space + 1;
    const char* last = line.data() + line.size();
    const auto [end, error] = std::from_chars(first, last, bytes);
    if (error != std::errc() || end != last)
      fail(op, path,
           fmt::format("line {}: {} size: expected a byte count, got '{}'", line_number, name,
                       std::string(first, last)));
    if (bytes > text.size() - at)
      fail(op, path,
           fmt::format("line {}: {} announces {} bytes but only {} remain (truncated file?)", line_number, name, bytes,
                       text.size() - at));
    contents.sections[section->first][section->second] = text.substr(at, bytes);
    at += bytes;
    line_number += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(at - bytes),
                                               text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  }
  return contents;
}

void write_section(std::ostream& out, std::string_view name, const std::string& text) {
  out << name << ' ' << text.size() << '\n' << text << '\n';
}

}  // namespace

std::string save_to_string() {
  std::ostringstream out;
  out << kHeader << '\n';
  detail::write_tuning_entries(out);
  for (const detail::TuningSectionProvider& provider : providers()) {
    const std::vector<std::string> texts = provider.save();
    for (std::size_t s = 0; s < provider.names.size(); ++s)
      write_section(out, provider.names[s], s < texts.size() ? texts[s] : std::string());
  }
  return out.str();
}

void save(const std::string& path) {
  const std::string text = save_to_string();
  // Written beside the target and renamed over it: a reader never sees half a file, and a failed save leaves the
  // previous file as it was.
  // The temporary's own name is short whatever the target's is (a target of NAME_MAX characters is legal), so a
  // failure to create it is the directory's, and the message says it is the temporary that could not be written.
  static std::atomic<unsigned> g_saves{0};
  const std::filesystem::path directory = std::filesystem::path(path).parent_path();
  const std::string temporary =
      (directory / fmt::format(".cuplan-tuning.{}.{}.tmp", ::getpid(), g_saves.fetch_add(1))).string();
  {
    File file(std::fopen(temporary.c_str(), "wb"));
    if (!file)
      fail("save", path,
           fmt::format("cannot write the temporary file '{}' beside it: {}", temporary, std::strerror(errno)));
    const bool written = std::fwrite(text.data(), 1, text.size(), file.get()) == text.size();
    const int write_errno = errno;
    if (!written || std::fclose(file.release()) != 0) {
      std::remove(temporary.c_str());
      fail("save", path,
           fmt::format("cannot write the temporary file '{}' beside it: {}", temporary,
                       std::strerror(written ? errno : write_errno)));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(temporary.c_str());
    fail("save", path, fmt::format("cannot write: {}", std::strerror(rename_errno)));
  }
  detail::log(LogLevel::info, "tuning::save: wrote {} bytes to '{}'", text.size(), path);
}

namespace {
// Adds parsed tuning to the process's: the backends' sections first, the part that can still refuse, so that a
// refusal changes nothing. (With more than one provider, one that refuses after another took its sections leaves
// those taken; FFTW is the only provider.)
void apply(const char* op, const std::string& path, const Contents& contents) {
  const std::vector<detail::TuningSectionProvider>& all = providers();
  for (std::size_t p = 0; p < all.size(); ++p)
    if (const std::string refused = all[p].load(contents.sections[p]); !refused.empty()) fail(op, path, refused);
  detail::tuning_record_all(contents.entries);
}

std::size_t section_count(const Contents& contents) {
  std::size_t n = 0;
  for (const std::vector<std::string>& texts : contents.sections)
    n += static_cast<std::size_t>(std::count_if(texts.begin(), texts.end(), [](const auto& t) { return !t.empty(); }));
  return n;
}
}  // namespace

void load(const std::string& path) {
  const Contents contents = parse("load", path, read_file(path));
  apply("load", path, contents);
  detail::log(LogLevel::info, "tuning::load: {} tuning entries and {} backend sections from '{}'",
              contents.entries.size(), section_count(contents), path);
}

void load_from_string(const std::string& text) {
  const Contents contents = parse("load_from_string", "", text);
  apply("load_from_string", "", contents);
  detail::log(LogLevel::info, "tuning::load_from_string: {} tuning entries and {} backend sections ({} bytes)",
              contents.entries.size(), section_count(contents), text.size());
}

}  // namespace tuning
}  // namespace CUPLAN_ABI_NAMESPACE

namespace detail {

void register_tuning_sections(TuningSectionProvider provider) {
  tuning::providers().push_back(std::move(provider));
}

}  // namespace detail
}  // namespace cuplan
