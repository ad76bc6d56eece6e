// SPDX-License-Identifier: Apache-2.0
#ifndef CUPLAN_FFT_CALLBACK_DEVICE_HPP
#define CUPLAN_FFT_CALLBACK_DEVICE_HPP
// What an FFT prolog or epilog (cuplan/fft_callbacks.hpp) receives as its `caller_info` argument, and helpers to
// read it: the user data pointer and the position of an element in the operand's (prolog) or result's (epilog)
// shape. Header-only, with no includes, so that one text serves three compilers: NVRTC compiling a callback given
// as source (cuplan hands it this header, found as <cuplan/fft_callback_device.hpp> with no include path), nvcc
// compiling a callback to LTO-IR (nvcc -dlto, cuplan_add_fft_callback in CMake), and the host compiler for host
// callables of CPU execution.

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define CUPLAN_FFT_CALLBACK_FN __host__ __device__ inline
#else
/// Marks the helpers callable from host and device code.
#define CUPLAN_FFT_CALLBACK_FN inline
#endif

namespace cuplan {
/// Helpers for the code of FFT callbacks (docs/fft.md, "Callbacks").
namespace fft_callback {

/// Most axes an operand has (the tensor rank limit).
constexpr int max_rank = 8;

/// The block a callback's `caller_info` points to, one per callback of a planned transform (device memory for
/// cuFFT, host memory for FFTW). The offset a callback receives counts elements from the start of the buffer the
/// transform reads (prolog) or writes (epilog) in this call; the block says which element of the operand or result
/// that is. Read it through the functions below rather than field by field.
struct Info {
  /// The user data pointer given with the callback (FFTCallback's `user_data`, or an execute's override).
  void* user_data;
  /// Number of axes of the operand (prolog) or the result (epilog).
  int rank;
  /// Number of entries in `extent`, `stride` and `axis`: the axes longer than 1.
  int terms;
  /// Extents of the axes longer than 1, by decreasing stride.
  long long extent[max_rank];
  /// Strides (elements) of those axes in the buffer the callback's offset counts in.
  long long stride[max_rank];
  /// Which axis of the operand or result each entry is.
  int axis[max_rank];
};

/// The user data pointer of the callback, as a T*.
template <class T = void>
CUPLAN_FFT_CALLBACK_FN T* user_data(const void* caller_info) {
  return static_cast<T*>(static_cast<const Info*>(caller_info)->user_data);
}

/// Number of axes of the operand (prolog) or the result (epilog).
CUPLAN_FFT_CALLBACK_FN int rank(const void* caller_info) {
  return static_cast<const Info*>(caller_info)->rank;
}

/// Writes the indices of the element at `offset` into `index[0 .. rank)` (axis order of the operand or result).
CUPLAN_FFT_CALLBACK_FN void indices(unsigned long long offset, const void* caller_info, long long* index) {
  const Info& info = *static_cast<const Info*>(caller_info);
  for (int a = 0; a < info.rank; ++a) index[a] = 0;
  long long rest = static_cast<long long>(offset);
  for (int k = 0; k < info.terms; ++k) {
    index[info.axis[k]] = rest / info.stride[k];
    rest -= index[info.axis[k]] * info.stride[k];
  }
}

/// The index along `axis` of the element at `offset` (0 for an axis of length 1).
CUPLAN_FFT_CALLBACK_FN long long index(unsigned long long offset, const void* caller_info, int axis) {
  const Info& info = *static_cast<const Info*>(caller_info);
  long long rest = static_cast<long long>(offset);
  for (int k = 0; k < info.terms; ++k) {
    const long long i = rest / info.stride[k];
    if (info.axis[k] == axis) return i;
    rest -= i * info.stride[k];
  }
  return 0;
}

/// The row-major position of the element at `offset` in the operand's (prolog) or result's (epilog) shape: the
/// flat index a dense array of that shape would give it, whatever the buffer's layout.
CUPLAN_FFT_CALLBACK_FN long long flat_index(unsigned long long offset, const void* caller_info) {
  const Info& info = *static_cast<const Info*>(caller_info);
  long long index[max_rank];
  indices(offset, caller_info, index);
  long long extent[max_rank];
  for (int a = 0; a < info.rank; ++a) extent[a] = 1;
  for (int k = 0; k < info.terms; ++k) extent[info.axis[k]] = info.extent[k];
  long long flat = 0;
  for (int a = 0; a < info.rank; ++a) flat = flat * extent[a] + index[a];
  return flat;
}

}  // namespace fft_callback
}  // namespace cuplan

#endif  // CUPLAN_FFT_CALLBACK_DEVICE_HPP
