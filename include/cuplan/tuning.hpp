// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tuning that persists across runs (docs/matmul.md, "Saved tuning"; docs/fft.md, "Planning effort and saved
// wisdom").

#include <string>

#include "cuplan/export.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace tuning {

/// Writes the process's tuning to `path` (a text file, replaced as a whole): every Matmul autotune choice, keyed by
/// the problem, the device name, the compute capability and the cuBLASLt version, and FFTW's wisdom in double and
/// single precision. Safe while other threads plan. A file that cannot be written is InvalidArgument naming the
/// path and the reason; an existing file is then left as it was.
CUPLAN_API void save(const std::string& path);

/// Adds the tuning saved in `path` to the process's: a later Matmul::autotune of a saved problem on the same kind
/// of device and cuBLASLt version takes the saved choice without timing anything, and FFTW plans of saved problems
/// (same sizes, strides, alignment, thread count and Planning) come from the wisdom without measuring. Entries
/// saved for another device or cuBLASLt version are kept (and saved again) but not used; an info log line says so
/// when one is met. Safe while other threads plan. A missing, unreadable or malformed file, or wisdom FFTW
/// rejects, is InvalidArgument naming the path and what was wrong, and changes nothing.
CUPLAN_API void load(const std::string& path);

/// The process's tuning as text: what save() writes to a file, for a program that keeps or sends it itself (an MPI
/// code that broadcasts rank 0's tuning, a checkpoint). Safe while other threads plan.
CUPLAN_API std::string save_to_string();

/// Adds the tuning in `text` (from save_to_string(), or the contents of a file save() wrote) to the process's, as
/// load() does. Malformed text, or wisdom FFTW rejects, is InvalidArgument saying what was wrong, and changes
/// nothing.
CUPLAN_API void load_from_string(const std::string& text);

}  // namespace tuning
}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
