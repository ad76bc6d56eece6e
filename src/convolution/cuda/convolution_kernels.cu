// SPDX-License-Identifier: Apache-2.0
// The separate-pass route's kernels (see convolution_kernels.hpp). Row-wise (runtime/row_walk.hpp): a row's position
// (batch entry, outer indices, the kernel's entry) is worked out once per row, not per element.

#include <cuComplex.h>

#include <type_traits>

#include "convolution/cuda/convolution_kernels.hpp"
#include "runtime/row_walk.hpp"

namespace cuplan::detail {
namespace {

constexpr int kThreads = 256;

template <class T>
struct Complex;
template <>
struct Complex<float> {
  using type = float2;
};
template <>
struct Complex<double> {
  using type = double2;
};

template <class Dst, class Src>
__device__ Dst convert(Src value) {
  if constexpr (std::is_same_v<Dst, Src>)
    return value;
  else
    return Dst{value, 0};  // real into complex
}

// Blocks along a row of `length` elements and along `rows` rows.
dim3 row_grid(std::int64_t length, std::int64_t rows) {
  const RowWalkGrid grid = row_walk_grid(rows, length, kThreads);
  return dim3(static_cast<unsigned>(grid.x), static_cast<unsigned>(grid.y));
}

// Row `row` of an array of rows [batch][n[0]][n[1]] as its batch entry and its two outer indices.
struct RowIndex {
  std::int64_t batch, i0, i1;
};
template <class Extents>
__device__ RowIndex split_row(std::int64_t row, const Extents& n) {
  const std::int64_t i1 = row % n[1];
  row /= n[1];
  return {row / n[0], row % n[0], i1};
}

// Row r = (b, i0, i1) of the dense work buffer: the source row (zeros beyond its extents) into dst + r * length[2].
template <class Src, class Dst>
__global__ void pad_kernel(const Src* src, CanonicalWalk w, std::int64_t rows, WorkDims d, Dst* dst) {
  walk_rows(rows, d.length[2], this_row_grid_place(), [&](std::int64_t row) {
    const RowIndex r = split_row(row, d.length);
    const bool inside = r.i0 < w.extent[0] && r.i1 < w.extent[1];
    const Src* in = src + (inside ? w.batch_offset(r.batch) + r.i0 * w.stride[0] + r.i1 * w.stride[1] : 0);
    const std::int64_t valid = inside ? w.extent[2] : 0;
    Dst* out = dst + row * d.length[2];
    return [in, out, valid, stride = w.stride[2]](std::int64_t i2) {
      out[i2] = i2 < valid ? convert<Dst>(in[i2 * stride]) : Dst{};
    };
  });
}

// Spectrum entry b (`entry` values) times the kernel's entry map.batch_offset(b).
template <class C>
__global__ void multiply_kernel(C* spectrum, const C* kernel, std::int64_t entries, std::int64_t entry,
                                CanonicalWalk map) {
  walk_rows(entries, entry, this_row_grid_place(), [&](std::int64_t b) {
    C* x = spectrum + b * entry;
    const C* h = kernel + map.batch_offset(b) * entry;
    return [x, h](std::int64_t i) {
      const C k = h[i];
      const C v = x[i];
      x[i] = C{v.x * k.x - v.y * k.y, v.x * k.y + v.y * k.x};
    };
  });
}

// Result row r = (b, i0, i1) of the result's extents: its part of the work buffer's entry b.
template <class T>
__global__ void crop_kernel(const T* src, WorkDims d, std::int64_t rows, CanonicalWalk w, T* dst) {
  walk_rows(rows, w.extent[2], this_row_grid_place(), [&](std::int64_t row) {
    const RowIndex r = split_row(row, w.extent);
    const T* in =
        src + r.batch * d.entry + ((r.i0 + d.offset[0]) * d.length[1] + r.i1 + d.offset[1]) * d.length[2] + d.offset[2];
    T* out = dst + w.batch_offset(r.batch) + r.i0 * w.stride[0] + r.i1 * w.stride[1];
    return [in, out, stride = w.stride[2]](std::int64_t i2) { out[i2 * stride] = in[i2]; };
  });
}

// Destination row r = (entry, k2, group, w) of the tiled spectrum: frequencies split * k1 + k2 of column group * width
// + w of the entry, or zeros; `length / split` values a row (split 1: the whole column).
template <class C>
__global__ void tile_columns_kernel(const C* src, C* dst, std::int64_t rows, std::int64_t length, std::int64_t columns,
                                    std::int64_t width, std::int64_t split) {
  const std::int64_t groups = (columns + width - 1) / width, inner = length / split;
  walk_rows(rows, inner, this_row_grid_place(), [&](std::int64_t row) {
    const std::int64_t w = row % width, group = (row / width) % groups, block = row / (width * groups);
    const std::int64_t entry = block / split, k2 = block % split, column = group * width + w;
    const C* in = column < columns ? src + (entry * length + k2) * columns + column : nullptr;
    C* out = dst + row * inner;
    const std::int64_t step = split * columns;
    return [in, out, step](std::int64_t k1) { out[k1] = in != nullptr ? in[k1 * step] : C{}; };
  });
}

template <class Src, class Dst>
cudaError_t launch_pad(const void* src, const CanonicalWalk& walk, std::int64_t entries, const WorkDims& dims,
                       void* dst, cudaStream_t stream) {
  const std::int64_t rows = entries * dims.length[0] * dims.length[1];
  if (rows == 0) return cudaSuccess;
  pad_kernel<Src, Dst><<<row_grid(dims.length[2], rows), kThreads, 0, stream>>>(static_cast<const Src*>(src), walk,
                                                                                rows, dims, static_cast<Dst*>(dst));
  return cudaGetLastError();
}

template <class R>
cudaError_t pad_precision(const void* src, bool src_complex, const CanonicalWalk& walk, std::int64_t entries,
                          const WorkDims& dims, void* dst, bool dst_complex, cudaStream_t stream) {
  using C = typename Complex<R>::type;
  if (src_complex) return launch_pad<C, C>(src, walk, entries, dims, dst, stream);
  if (dst_complex) return launch_pad<R, C>(src, walk, entries, dims, dst, stream);
  return launch_pad<R, R>(src, walk, entries, dims, dst, stream);
}

}  // namespace

cudaError_t pad_device(const void* src, DType src_dtype, const CanonicalWalk& walk, std::int64_t entries,
                       const WorkDims& dims, void* dst, DType dst_dtype, cudaStream_t stream) {
  if (src_dtype.real() == f64)
    return pad_precision<double>(src, src_dtype.is_complex(), walk, entries, dims, dst, dst_dtype.is_complex(), stream);
  return pad_precision<float>(src, src_dtype.is_complex(), walk, entries, dims, dst, dst_dtype.is_complex(), stream);
}

cudaError_t multiply_device(void* spectrum, const void* kernel, DType dtype, std::int64_t entries, std::int64_t entry,
                            const CanonicalWalk& kernel_entries, cudaStream_t stream) {
  if (entries * entry == 0) return cudaSuccess;
  const dim3 grid = row_grid(entry, entries);
  if (dtype.real() == f64)
    multiply_kernel<<<grid, kThreads, 0, stream>>>(static_cast<double2*>(spectrum), static_cast<const double2*>(kernel),
                                                   entries, entry, kernel_entries);
  else
    multiply_kernel<<<grid, kThreads, 0, stream>>>(static_cast<float2*>(spectrum), static_cast<const float2*>(kernel),
                                                   entries, entry, kernel_entries);
  return cudaGetLastError();
}

cudaError_t tile_column_spectrum_device(const void* src, void* dst, DType dtype, std::int64_t entries,
                                        std::int64_t length, std::int64_t columns, std::int64_t width,
                                        std::int64_t split, cudaStream_t stream) {
  if (split < 1 || length % split != 0) return cudaErrorInvalidValue;
  const std::int64_t rows = entries * split * ((columns + width - 1) / width) * width;
  if (rows * length == 0) return cudaSuccess;
  const dim3 grid = row_grid(length / split, rows);
  if (dtype.real() == f64)
    tile_columns_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const double2*>(src), static_cast<double2*>(dst),
                                                       rows, length, columns, width, split);
  else
    tile_columns_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const float2*>(src), static_cast<float2*>(dst), rows,
                                                       length, columns, width, split);
  return cudaGetLastError();
}

cudaError_t crop_device(const void* src, DType dtype, const WorkDims& dims, std::int64_t entries,
                        const CanonicalWalk& walk, void* dst, cudaStream_t stream) {
  const std::int64_t rows = entries * walk.extent[0] * walk.extent[1];
  if (rows * walk.extent[2] == 0) return cudaSuccess;
  const dim3 grid = row_grid(walk.extent[2], rows);
  if (dtype == c128)
    crop_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const double2*>(src), dims, rows, walk,
                                               static_cast<double2*>(dst));
  else if (dtype == c64)
    crop_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const float2*>(src), dims, rows, walk,
                                               static_cast<float2*>(dst));
  else if (dtype == f64)
    crop_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const double*>(src), dims, rows, walk,
                                               static_cast<double*>(dst));
  else
    crop_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const float*>(src), dims, rows, walk,
                                               static_cast<float*>(dst));
  return cudaGetLastError();
}

}  // namespace cuplan::detail
