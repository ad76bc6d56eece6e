#pragma once
// Tuning that persists across runs (docs/matmul.md, "Saved tuning"; docs/fft.md, "Planning effort").

#include <string>

#include "cuplan/export.hpp"

namespace cuplan::tuning {

/// Writes the process's tuning to `path`: every Matmul autotune choice (keyed by the problem, the device name,
/// the compute capability and the cuBLASLt version) and FFTW's wisdom (double and single precision). A file
/// that cannot be written is InvalidArgument naming the path.
CUPLAN_API void save(const std::string& path);
/// Adds the tuning in `path` to the process's: a later Matmul::autotune of a saved problem on the same kind of
/// device and cuBLASLt version takes the saved choice without timing anything, and FFTW plans find the saved
/// wisdom. Entries saved for another device or library version are kept but not used (a log line says so when
/// they are met). A missing or malformed file is InvalidArgument naming the path.
CUPLAN_API void load(const std::string& path);

}  // namespace cuplan::tuning
