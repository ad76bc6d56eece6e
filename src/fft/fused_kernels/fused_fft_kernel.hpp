// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cuFFTDx backend of the fused FFT route (docs/fft.md, "Route choice"): one kernel of cuplan's own per planned
// transform, generated as CUDA source with the user's prolog and epilog inlined into its loads and stores, compiled
// by NVRTC against the cuFFTDx headers to a cubin for the device's architecture (with callbacks given as LTO-IR:
// compiled to LTO-IR and linked with them by nvJitLink into the cubin), and kept in a process-wide cache
// and an on-disk cache (a second plan of the same source compiles nothing, also in a new process). Compilation
// needs no GPU; loading and launching do. Free of NVRTC's and cuFFTDx's headers; the CPU-only build answers with
// fused_fft_no_device.cpp.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuplan/dtype.hpp"
#include "cuplan/fft.hpp"

namespace cuplan::detail::fused_fft {

/// A GPU callback as the generated kernel calls it: the CUDA source (FFTCallback::Form::cuda_source) or the LTO-IR
/// (FFTCallback::Form::lto_ir: non-empty `lto_ir`, the kernel declares `symbol` and nvJitLink links it in), the
/// user's function, the element type it loads or stores and the name errors give it ("prolog 'scale'").
struct InlinedCallback {
  std::string source;
  std::string symbol;
  DType element;
  std::string name;
  std::vector<unsigned char> lto_ir;
  bool is_lto() const noexcept { return !lto_ir.empty(); }
};

/// What one fused kernel computes: a batch of 1D transforms of `length` points along a contiguous axis, with the
/// optional prolog and epilog. C2C programs hold a forward and an inverse kernel, R2C a forward and C2R an inverse
/// one; real f32 rows of a power-of-two length run in the folded mode (folded_real_mode).
struct KernelSpec {
  FFTType type = FFTType::c2c;
  DType precision = f32;  ///< f32 or f64
  std::int64_t length = 0;
  int sm = 0;  ///< compute capability, e.g. 90
  std::shared_ptr<const InlinedCallback> prolog, epilog;
  /// Whether a callback is LTO-IR: the program is then compiled to LTO-IR and linked with it by nvJitLink.
  bool links_lto() const noexcept { return (prolog && prolog->is_lto()) || (epilog && epilog->is_lto()); }
};

/// Whether a real transform runs in cuFFTDx's folded mode (RealFFTOptions<complex_layout::natural,
/// real_mode::folded>): the row's N real values are loaded as N/2 complex ones (pairs of neighbours), transformed by
/// a C2C FFT of N/2 points and separated into the N/2 + 1 values of the half spectrum (C2R the other way round).
/// Half the FFT's arithmetic and registers of the normal real mode, the same memory traffic, and twice its longest
/// length (65536 for f32 on sm_90). cuFFTDx folds power-of-two lengths in a block; cuplan folds real f32 rows of a
/// power-of-two length of 4 or more, and keeps the normal mode for f64 and other even lengths. Pure.
inline bool folded_real_mode(FFTType type, DType precision, std::int64_t length) noexcept {
  return type != FFTType::c2c && precision == f32 && length >= 4 && (length & (length - 1)) == 0;
}

/// Whether a program of `type` holds the kernel of `direction`: a C2C program both, an R2C program the forward and a
/// C2R program the inverse one. kernel_source() writes those, and LoadedKernel::load() looks up only those, so that
/// no lookup of an absent kernel raises a CUDA error for the sanitizers to report. Pure.
inline bool program_holds(FFTType type, Direction direction) noexcept {
  return type == FFTType::c2c || (type == FFTType::r2c) == (direction == Direction::forward);
}

/// The CUDA source of `spec`'s program (pure; used by the compilation and by tests).
std::string kernel_source(const KernelSpec& spec);

/// A compiled program: the cubin for spec.sm and the key it is cached under (a hash of the source, the NVRTC
/// options and version and the MathDx version).
struct CompiledKernel {
  std::vector<char> cubin;
  std::string key;
  FFTType type = FFTType::c2c;  ///< which kernels the program holds (program_holds)
};

/// The key `spec`'s program is cached under (what compiled_kernel() would look up; nothing is compiled).
/// CallbackError for an LTO-IR callback whose symbol is not a plain name.
std::string kernel_key(const KernelSpec& spec);

/// The compiled program of `spec`: from this process's cache, else from the on-disk cache, else compiled by NVRTC
/// (and, with LTO-IR callbacks, linked by nvJitLink; the key then holds a hash of their bytes and nvJitLink's
/// version) (fft_callback_stats() counts compilations and hits; the cubin is then written to the on-disk cache,
/// through a temporary file renamed into place, so concurrent processes never see a partial file). CallbackError
/// naming the callbacks, with NVRTC's or nvJitLink's log, when the program does not compile or link (LTO-IR that
/// nvJitLink does not take is named before anything is compiled); NotSupported when the cuFFTDx headers are not
/// found (headers_problem()).
std::shared_ptr<const CompiledKernel> compiled_kernel(const KernelSpec& spec);

/// Empty when the cuFFTDx headers NVRTC compiles against are found (the MathDx the build found, or
/// CUPLAN_MATHDX_ROOT at run time), else why not.
std::string headers_problem();

/// Whether cuFFTDx has a kernel of its own for `length` in `precision` (f32 or f64), read from the headers' database
/// (cufftdx/database/fft_<length>_fp<32|64>_fwd.hpp.inc) once per process; false when the headers are not found.
bool is_native_length(DType precision, std::int64_t length);

/// The on-disk cache folder: CUPLAN_KERNEL_CACHE_DIR when set (empty or "off": no on-disk cache), else
/// $XDG_CACHE_HOME/cuplan/kernels, else $HOME/.cache/cuplan/kernels; empty when none.
std::string kernel_cache_directory();

/// Forgets this process's compiled programs (tests of the on-disk cache; loaded kernels stay loaded).
void clear_process_cache_for_testing();

/// One launch: rows of the batch, their distances in elements, the callbacks' caller_info blocks (device memory)
/// and the factor the stored values are multiplied by (only without an epilog; 1: none).
struct FusedFftRows {
  const void* in = nullptr;
  void* out = nullptr;
  long long rows = 0;
  long long idist = 0;
  long long odist = 0;
  void* prolog_info = nullptr;
  void* epilog_info = nullptr;
  double scale = 1.0;
};

/// A compiled program loaded on the device (CUDA runtime library), with the launch geometry each kernel reported.
class LoadedKernel {
 public:
  /// Loads `compiled` (kept loaded for the process: plans of the same program share it) and prepares each kernel's
  /// shared memory limit on `device`.
  static std::shared_ptr<const LoadedKernel> load(const std::shared_ptr<const CompiledKernel>& compiled, int device);
  /// Enqueues the transform of every row on `stream` in `direction`.
  void launch(Direction direction, const FusedFftRows& rows, cudaStream_t stream) const;

  struct Entry {
    const void* kernel = nullptr;  ///< cudaKernel_t, as cudaLaunchKernel takes it; null when absent
    unsigned threads_x = 0, threads_y = 0, ffts_per_block = 0, shared_bytes = 0;
  };
  Entry forward, inverse;
};

}  // namespace cuplan::detail::fused_fft
