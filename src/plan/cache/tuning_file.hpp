// SPDX-License-Identifier: Apache-2.0
#pragma once
// The tuning file's named sections (tuning_file.cpp, cuplan/tuning.hpp): a backend whose library keeps tuning of
// its own (FFTW's wisdom) registers the sections it writes; tuning::save asks it for their text and tuning::load
// hands a file's sections back. The file itself knows no backend.

#include <string>
#include <utility>
#include <vector>

namespace cuplan::detail {

/// The sections one backend owns, taken back together so that the backend can apply all of them or none.
struct TuningSectionProvider {
  /// The section names, unique across providers ("fftw-double", "fftw-single"), in the order they are written.
  std::vector<std::string> names;
  /// The sections' texts, in the order of `names` (an empty text is written as an empty section).
  std::vector<std::string> (*save)() = nullptr;
  /// Applies a loaded file's sections, in the order of `names` (a section the file lacks is empty): all of them or
  /// none. Empty on success; else the message of the InvalidArgument tuning::load throws, naming what was refused.
  std::string (*load)(const std::vector<std::string>& texts) = nullptr;
};

/// Registers `provider` (at static initialisation, through a TuningSectionRegistrar in the backend's file; the
/// shared library links every backend file, so its tuning file always holds every section).
void register_tuning_sections(TuningSectionProvider provider);

struct TuningSectionRegistrar {
  explicit TuningSectionRegistrar(TuningSectionProvider provider) { register_tuning_sections(std::move(provider)); }
};

}  // namespace cuplan::detail
