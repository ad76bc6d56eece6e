// tuning::save / load. Implemented in the FFT layer, which owns FFTW's wisdom; Matmul's choices reach it through
// the plan layer's tuning store.

#include "cuplan/tuning.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "fft/fftw/fftw_backend.hpp"
#include "plan/tuning_store.hpp"

namespace cuplan::tuning {
namespace {

constexpr const char* header = "cuplan-tuning 1";

void write_block(std::ostream& out, const char* name, const std::string& text) {
  out << name << ' ' << text.size() << '\n' << text << '\n';
}

}  // namespace

void save(const std::string& path) {
  std::ostringstream out;
  out << header << '\n';
  detail::write_tuning_entries(out);
  const detail::FftwWisdom wisdom = detail::export_fftw_wisdom();
  write_block(out, "fftw-double", wisdom.double_precision);
  write_block(out, "fftw-single", wisdom.single_precision);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  const std::string text = out.str();
  if (!file || !file.write(text.data(), static_cast<std::streamsize>(text.size())) || !file.flush())
    throw InvalidArgument(fmt::format("tuning::save: path: cannot write '{}'", path));
  detail::log(LogLevel::info, "tuning::save: wrote {} bytes to '{}'", text.size(), path);
}

void load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InvalidArgument(fmt::format("tuning::load: path: cannot open '{}'", path));
  std::string line;
  if (!std::getline(file, line) || line != header)
    throw InvalidArgument(
        fmt::format("tuning::load: '{}': expected the first line '{}', got '{}'", path, header, line.substr(0, 40)));
  detail::FftwWisdom wisdom;
  int entries = 0;
  while (std::getline(file, line)) {
    if (line.empty()) continue;
    if (line.rfind("entry\t", 0) == 0) {
      if (!detail::read_tuning_entry(line))
        throw InvalidArgument(fmt::format("tuning::load: '{}': malformed entry line '{}'", path, line));
      ++entries;
      continue;
    }
    std::string name;
    std::size_t bytes = 0;
    std::istringstream words(line);
    if (!(words >> name >> bytes) || (name != "fftw-double" && name != "fftw-single"))
      throw InvalidArgument(fmt::format("tuning::load: '{}': unexpected line '{}'", path, line.substr(0, 60)));
    std::string text(bytes, '\0');
    if (!file.read(text.data(), static_cast<std::streamsize>(bytes)))
      throw InvalidArgument(fmt::format("tuning::load: '{}': {} ends early; expected {} bytes", path, name, bytes));
    (name == "fftw-double" ? wisdom.double_precision : wisdom.single_precision) = std::move(text);
  }
  if (!detail::import_fftw_wisdom(wisdom))
    throw InvalidArgument(fmt::format("tuning::load: '{}': FFTW rejected the saved wisdom", path));
  detail::log(LogLevel::info, "tuning::load: {} tuning entries and FFTW wisdom from '{}'", entries, path);
}

}  // namespace cuplan::tuning
