// SPDX-License-Identifier: Apache-2.0
#ifndef CUPLAN_FFT_CALLBACK_DEVICE_HPP
#define CUPLAN_FFT_CALLBACK_DEVICE_HPP
// What an FFT prolog or epilog (cuplan/fft_callbacks.hpp) receives as its `caller_info` argument, and helpers to
// read it: the user data pointer and the position of an element in the operand's (prolog) or result's (epilog)
// shape. Header-only, with no includes, so that one text serves three compilers: NVRTC compiling a callback given
// as source (cuplan hands it this header, found as <cuplan/fft_callback_device.hpp> with no include path), nvcc
// compiling a callback to LTO-IR (nvcc -dlto, cuplan_add_fft_callback in CMake), and the host compiler for host
// callables of CPU execution.
//
// The position helpers cost a multiply and a compare or two per axis, with no 64-bit integer division (which a GPU
// runs as a long instruction sequence). Precondition: the offset is below 2^53 (the helpers are exact there; the
// element offsets of any real buffer are far below).

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
  /// Number of entries in `extent`, `stride`, `axis`, `reciprocal` and `dense_stride`: the axes longer than 1.
  int terms;
  /// Extents of the axes longer than 1, by decreasing stride.
  long long extent[max_rank];
  /// Strides (elements) of those axes in the buffer the callback's offset counts in.
  long long stride[max_rank];
  /// Which axis of the operand or result each entry is.
  int axis[max_rank];
  /// 1.0 / stride[k], rounded to double: the helpers divide an offset by a stride with one multiply and correct
  /// the quotient by at most one with integer arithmetic, where a 64-bit integer division costs dozens of
  /// instructions on a GPU.
  double reciprocal[max_rank];
  /// Row-major stride of entry k's axis in a dense array of the operand's (result's) shape: the product of the
  /// extents of the axes after it that are longer than 1. flat_index weighs entry k's index with it.
  long long dense_stride[max_rank];
};

namespace detail {

/// Divides `rest` by entry `k`'s stride: returns the quotient and leaves the remainder in `rest`. Exact for
/// 0 <= rest < 2^53: rest converts to double exactly, and rounding 1/stride and the product each err by under
/// 2^-53 relative, so on a quotient below 2^52 (a stride of 2 or more) the truncated product is the quotient or one
/// off either way, which one integer step corrects. A stride of 1 divides nothing.
CUPLAN_FFT_CALLBACK_FN long long divide(long long& rest, const Info& info, int k) {
  const long long stride = info.stride[k];
  if (stride == 1) {
    const long long quotient = rest;
    rest = 0;
    return quotient;
  }
  long long quotient = static_cast<long long>(static_cast<double>(rest) * info.reciprocal[k]);
  long long remainder = rest - quotient * stride;
  if (remainder < 0) {
    --quotient;
    remainder += stride;
  } else if (remainder >= stride) {
    ++quotient;
    remainder -= stride;
  }
  rest = remainder;
  return quotient;
}

}  // namespace detail

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
  for (int k = 0; k < info.terms; ++k) index[info.axis[k]] = detail::divide(rest, info, k);
}

/// The index along `axis` of the element at `offset` (0 for an axis of length 1).
CUPLAN_FFT_CALLBACK_FN long long index(unsigned long long offset, const void* caller_info, int axis) {
  const Info& info = *static_cast<const Info*>(caller_info);
  long long rest = static_cast<long long>(offset);
  for (int k = 0; k < info.terms; ++k) {
    const long long i = detail::divide(rest, info, k);
    if (info.axis[k] == axis) return i;
  }
  return 0;
}

/// The row-major position of the element at `offset` in the operand's (prolog) or result's (epilog) shape: the
/// flat index a dense array of that shape would give it, whatever the buffer's layout.
CUPLAN_FFT_CALLBACK_FN long long flat_index(unsigned long long offset, const void* caller_info) {
  const Info& info = *static_cast<const Info*>(caller_info);
  long long rest = static_cast<long long>(offset);
  long long flat = 0;
  for (int k = 0; k < info.terms; ++k) flat += detail::divide(rest, info, k) * info.dense_stride[k];
  return flat;
}

}  // namespace fft_callback
}  // namespace cuplan

#endif  // CUPLAN_FFT_CALLBACK_DEVICE_HPP
