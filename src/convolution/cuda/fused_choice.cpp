// SPDX-License-Identifier: Apache-2.0
// The device routes' choice (convolution_runner.hpp): the separate route, the fused row kernel (one FFT a row or
// overlap-save segments), the whole-transform kernel or the column route, by the planner's rules and what this build
// compiled and the device can run.

#include "convolution/cuda/fused_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/cuda_check.hpp"
#include "convolution/convolution_runner.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

constexpr std::int64_t kFusedMin = 256;
constexpr std::int64_t kFusedMax = 16384;

fused::FusedKind fused_kind(const ConvolutionGeometry& g) {
  if (g.real) return g.out_dtype == f64 ? fused::FusedKind::r2c_f64 : fused::FusedKind::r2c_f32;
  return g.out_dtype == c128 ? fused::FusedKind::c2c_f64 : fused::FusedKind::c2c_f32;
}

/// Why a compiled kernel of `length` with launch shape `block` cannot run on `device` (nullopt: it can).
std::optional<std::string> device_obstacle(const RowBlockKernel& block, std::int64_t length, int device) {
  int major = 0;
  CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9)
    return fmt::format("the fused kernels are compiled for sm_90 and newer; cuda:{} is sm_{}x", device, major);
  if (const std::optional<int> shared = block.shared_memory_short_on(device))
    return fmt::format("the fused kernel of length {} needs {} bytes of shared memory, cuda:{} allows {}", length,
                       block.shared_bytes, device, *shared);
  return std::nullopt;
}

constexpr const char* kNoFusedKernels =
    "this build has no fused kernels (MathDx was not found when configuring; CUPLAN_HAS_FUSED_FFT is 0)";

}  // namespace

/// The row kernel for a 1D `g`, or the reason there is none in this build or on this device.
const fused::FusedLauncher* fused_launcher(const ConvolutionGeometry& g, int device, std::string& why_not) {
  if (fused::launchers().empty()) {
    why_not = kNoFusedKernels;
    return nullptr;
  }
  const std::int64_t length = g.fft_length[0];
  const fused::FusedLauncher* launcher = fused::find_launcher(fused_kind(g), static_cast<int>(length));
  if (launcher == nullptr) {
    why_not = fmt::format("no fused kernel of length {} for {} was compiled (CUPLAN_FUSED_FFT_LENGTHS)", length,
                          g.out_dtype.name());
    return nullptr;
  }
  if (std::optional<std::string> obstacle = device_obstacle(launcher->block, length, device)) {
    why_not = std::move(*obstacle);
    return nullptr;
  }
  return launcher;
}

/// The column kernel for the first axis of a 2D or 3D `g` (complex, or real through its half spectrum), or the reason
/// there is none.
const fused::FusedColumnLauncher* fused_column_launcher(const ConvolutionGeometry& g, int device,
                                                        std::string& why_not) {
  if (fused::column_launchers().empty()) {
    why_not = kNoFusedKernels;
    return nullptr;
  }
  const std::int64_t length = g.fft_length[0];
  // Real convolutions too: the column kernel runs along the first axis of the inner axes' half spectrum.
  const fused::FusedKind kind = g.out_dtype.real() == f64 ? fused::FusedKind::c2c_f64 : fused::FusedKind::c2c_f32;
  const fused::FusedColumnLauncher* launcher = fused::find_column_launcher(kind, static_cast<int>(length));
  if (launcher == nullptr) {
    why_not = fmt::format(
        "no fused column kernel of length {} for {} was compiled (CUPLAN_FUSED_FFT_LENGTHS; c128 columns go up "
        "to 8192, a longer one does not fit the kernel's shared-memory tile)",
        length, g.out_dtype.real().complex().name());
    return nullptr;
  }
  if (std::optional<std::string> obstacle = device_obstacle(launcher->block, length, device)) {
    why_not = std::move(*obstacle);
    return nullptr;
  }
  return launcher;
}

/// The whole-transform kernel for a 2D or 3D `g` planned with every FFT length a power of two, or the reason there is
/// none (the geometry, the build or the device).
const fused::FusedBlockLauncher* fused_block_launcher(const ConvolutionGeometry& g, int device, std::string& why_not) {
  if (std::optional<std::string> obstacle = block_obstacle(g)) {
    why_not = std::move(*obstacle);
    return nullptr;
  }
  if (fused::block_launchers().empty()) {
    why_not = fused::launchers().empty() ? kNoFusedKernels
                                         : "this build has no whole-transform kernels (CUPLAN_FUSED_BLOCK_SHAPES)";
    return nullptr;
  }
  const fused::FusedKind kind = g.out_dtype.real() == f64 ? fused::FusedKind::c2c_f64 : fused::FusedKind::c2c_f32;
  int tile[3] = {1, 1, 1};
  for (int i = 0; i < g.rank; ++i) tile[3 - g.rank + i] = static_cast<int>(g.fft_length[i]);
  const fused::FusedBlockLauncher* launcher = fused::find_block_launcher(kind, tile[0], tile[1], tile[2]);
  if (launcher == nullptr) {
    why_not = fmt::format(
        "no whole-transform kernel of shape {} for {} was compiled (CUPLAN_FUSED_BLOCK_SHAPES)",
        g.rank == 2 ? fmt::format("{}x{}", tile[1], tile[2]) : fmt::format("{}x{}x{}", tile[0], tile[1], tile[2]),
        g.out_dtype.real().complex().name());
    return nullptr;
  }
  if (std::optional<std::string> obstacle = device_obstacle(launcher->block, g.fft_size, device)) {
    why_not = std::move(*obstacle);
    return nullptr;
  }
  return launcher;
}

namespace {

/// The lengths of the row kernels for `g`'s kind that run on `device`, ascending.
std::vector<std::int64_t> row_lengths(const ConvolutionGeometry& g, int device) {
  std::vector<std::int64_t> lengths;
  for (const fused::FusedLauncher* launcher : fused::launchers())
    if (launcher->kind == fused_kind(g) && !device_obstacle(launcher->block, launcher->length, device))
      lengths.push_back(launcher->length);
  std::sort(lengths.begin(), lengths.end());
  return lengths;
}

/// Why neither fused kernel serves `g` in this build on `device` (nullopt: one does).
std::optional<std::string> fused_build_obstacle(const ConvolutionGeometry& g, int device) {
  std::string why_not;
  const bool found = g.rank == 1 ? fused_launcher(g, device, why_not) != nullptr
                                 : fused_column_launcher(g, device, why_not) != nullptr;
  return found ? std::nullopt : std::optional<std::string>(why_not);
}

}  // namespace

DeviceConvolutionChoice choose_device_convolution(const ConvolutionRequest& request, const TensorView& operand,
                                                  cuplan::ConvolutionRoute route, int device) {
  DeviceConvolutionChoice choice;
  choice.geometry = plan_convolution(request);  // validates, whatever the route
  if (route == cuplan::ConvolutionRoute::separate) {
    choice.not_fused = "route separate was asked for";
    return choice;
  }
  // 2D and 3D on route fused: the whole-transform kernel where a compiled tile holds an entry (every FFT length the
  // next power of two). Route automatic does not take it until it is measured; where a tile applies, the column
  // route cannot (its first axis is 256 or longer), so automatic runs the separate route there.
  if (choice.geometry.rank > 1 && route == cuplan::ConvolutionRoute::fused) {
    ConvolutionRequest whole = request;
    whole.power_of_two_first = true;
    whole.power_of_two_all = true;
    ConvolutionGeometry tile = plan_convolution(whole);
    std::string why_not;
    if (fused_block_launcher(tile, device, why_not) != nullptr) {
      choice.geometry = std::move(tile);
      choice.fused = true;
      choice.block = true;
      return choice;
    }
  }
  ConvolutionRequest pow2 = request;
  pow2.power_of_two_first = true;
  ConvolutionGeometry candidate = plan_convolution(pow2);
  // 1D linear modes on route fused: one FFT a row, or overlap-save segments of a compiled length where the cost
  // model says so (and where one FFT would be longer than any compiled kernel). Route automatic keeps one FFT a row
  // until segments are measured against the separate route on a GPU (docs/convolution.md).
  const std::int64_t row_length = choose_row_fft_length(candidate, row_lengths(candidate, device));
  const bool segments = row_length != 0 && row_length != candidate.fft_length[0];
  if (segments && route == cuplan::ConvolutionRoute::fused) candidate = segmented(candidate, row_length);
  std::optional<std::string> obstacle = fused_obstacle(candidate, operand.strides(), kFusedMin, kFusedMax);
  if (!obstacle && route == cuplan::ConvolutionRoute::automatic) obstacle = automatic_fused_obstacle(candidate);
  if (!obstacle) obstacle = fused_build_obstacle(candidate, device);
  if (obstacle) {
    if (route == cuplan::ConvolutionRoute::fused)
      throw NotSupported(fmt::format("Convolution: route: the fused route cannot run this convolution: {}", *obstacle));
    choice.not_fused = *obstacle;
    if (segments && !fused_obstacle(segmented(candidate, row_length), operand.strides(), kFusedMin, kFusedMax))
      choice.not_fused += fmt::format(
          "; route fused runs it as overlap-save segments of {} (not measured against the separate route yet)",
          row_length);
    return choice;
  }
  choice.geometry = std::move(candidate);
  choice.fused = true;
  return choice;
}

}  // namespace cuplan::detail
