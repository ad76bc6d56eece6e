// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused real-to-real kernels: each FFT of a block loads one row of the axis with the kind's reordering or
// pre-twiddle, runs the FFT of related length in registers and shared memory (cuFFTDx), and stores the row with the
// twiddle, orthogonalize's edge factors and the norm's scale. The axis is read once and written once, against three
// reads and three writes for pre-pass + cuFFT + post-pass. The per-element algebra is fused_algebra.hpp's (checked on
// the CPU against r2r_pre_item / r2r_post_item's). Each kernel is compiled for one algorithm, so that the row length
// and the algorithm's branches are constants: cuFFTDx unrolls every element of a thread, and with the algorithm read
// at run time the R2C kernel of length 16384 (f32) held 13,712 instructions, whose fetches stalled its warps for 60 %
// of their cycles on an H100 (ncu); compiled for the DCT-II/DST-II algorithm it holds 7,160. The twiddles take one
// sincospi per thread and side (f32 kernels sincospif, 1 ulp; the angle p / 2^m is exact in either precision) and a
// rotation by a compile-time constant per register (ThreadTwiddles), instead of one sincospi per element, each tens
// of instructions of the unrolled kernel. Built on cuFFTDx (MathDx); only compiled when it is found.

#include <cstdint>
#include <cufftdx.hpp>
#include <type_traits>
#include <utility>

#include "r2r/cufft/fused_r2r_launch.hpp"
#include "r2r/fused_algebra.hpp"

namespace cuplan::detail::fused_r2r {

__device__ inline void sin_cos_pi(float x, float& s, float& c) {
  sincospif(x, &s, &c);
}
__device__ inline void sin_cos_pi(double x, double& s, double& c) {
  sincospi(x, &s, &c);
}

/// Calls body(std::integral_constant<unsigned, e>) for e = 0 .. Count-1: the unrolled loop over a thread's
/// registers, with the register index a constant expression (for ThreadTwiddles::at).
template <unsigned Count, class Body>
__device__ __forceinline__ void for_each_register(Body&& body) {
  [&]<unsigned... E>(std::integer_sequence<unsigned, E...>) {
    (body(std::integral_constant<unsigned, E>{}), ...);
  }
  (std::make_integer_sequence<unsigned, Count>{});
}

/// Whether register `E` of every thread (elements E * stride + t, t < stride) lies below `Count`: its test against
/// the row's or spectrum's end is then known at compile time and leaves no branch in the loop.
template <class FFT, unsigned E, long long Count>
constexpr bool register_inside() {
  return static_cast<long long>(E + 1) * FFT::stride <= Count;
}

/// The twiddles of a thread's elements k = e * Stride + threadIdx.x at the angle pi (a k + b) / d (Angle, from
/// fused_algebra.hpp): the thread's sincospi at e = 0, then per register e a rotation by pi e a Stride / d, a
/// constant the compiler evaluates (constant_cos_sin_pi). About 2-3 ulp in f32 against 1 for a sincospif per element.
template <class T, TwiddleAngle Angle, unsigned Stride>
struct ThreadTwiddles {
  FusedComplex<T> first;  // cos + i sin at k = threadIdx.x

  __device__ ThreadTwiddles() {
    sin_cos_pi(static_cast<T>(Angle.a * threadIdx.x + Angle.b) * (T(1) / static_cast<T>(Angle.d)), first.im, first.re);
  }
  template <unsigned E>
  __device__ FusedComplex<T> at(std::integral_constant<unsigned, E>) const {
    constexpr FusedComplex<double> step = constant_cos_sin_pi(Angle.a * E * Stride, Angle.d);
    constexpr T c = static_cast<T>(step.re), s = static_cast<T>(step.im);
    if constexpr (E == 0)
      return first;
    else
      return {first.re * c - first.im * s, first.im * c + first.re * s};
  }
};

/// One row's loads and stores: element i of the row in the source (with the input edge factors) and the
/// destination (with the output edge factors and the scale).
template <class T>
struct RowAccess {
  const T* src;
  T* dst;
  int n;
  T pre_first, pre_last, post_first, post_last, scale;

  __device__ RowAccess(const FusedR2RArgs& args, std::int64_t row, bool active, std::int64_t row_length) {
    std::int64_t src_offset = 0, dst_offset = 0;
    if (active) r2r_row_offsets(args.rows, row, src_offset, dst_offset);
    src = static_cast<const T*>(args.src) + src_offset;
    dst = static_cast<T*>(args.dst) + dst_offset;
    n = static_cast<int>(row_length);  // at most 2^16 (fused_algebra.hpp)
    pre_first = static_cast<T>(args.pre_first);
    pre_last = static_cast<T>(args.pre_last);
    post_first = static_cast<T>(args.post_first * args.scale);
    post_last = static_cast<T>(args.post_last * args.scale);
    scale = static_cast<T>(args.scale);
  }
  __device__ T load(int i) const {
    T v = src[i];
    if (i == 0) v *= pre_first;
    if (i == n - 1) v *= pre_last;
    return v;
  }
  __device__ void store(int i, T v) const {
    // A fused row has more than 100 elements: element 0 is never element n-1.
    const T f = i == 0 ? post_first : i == n - 1 ? post_last : scale;
    dst[i] = v * f;
  }
  /// Whether the row's quads can move as 16-byte accesses (f32 rows of a 16-byte aligned start).
  __device__ bool src_quads_aligned() const {
    return sizeof(T) == 4 && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0;
  }
  /// load_quad on a row for which src_quads_aligned() holds: one 16-byte load and no branch.
  __device__ void load_aligned_quad(int q, T (&x)[4]) const {
    if constexpr (sizeof(T) == 4) {
      const float4 v = *reinterpret_cast<const float4*>(src + 4 * q);
      x[0] = v.x;
      x[1] = v.y;
      x[2] = v.z;
      x[3] = v.w;
      if (q == 0) x[0] *= pre_first;
      if (4 * q + 3 == n - 1) x[3] *= pre_last;
    }
  }
  /// Elements 4q .. 4q+3 of the row, with the input edge factors: one 16-byte load where the row is so aligned.
  __device__ void load_quad(int q, T (&x)[4]) const {
    const T* p = src + 4 * q;
    if (sizeof(T) == 4 && (reinterpret_cast<std::uintptr_t>(src) & 15) == 0) {
      const float4 v = *reinterpret_cast<const float4*>(p);
      x[0] = static_cast<T>(v.x);
      x[1] = static_cast<T>(v.y);
      x[2] = static_cast<T>(v.z);
      x[3] = static_cast<T>(v.w);
    } else {
      for (int i = 0; i < 4; ++i) x[i] = p[i];
    }
    if (q == 0) x[0] *= pre_first;
    if (4 * q + 3 == n - 1) x[3] *= pre_last;
  }
  /// Stores elements 4q .. 4q+3 of the row, with the output edge factors and the scale: one 16-byte store where the
  /// row is so aligned.
  __device__ void store_quad(int q, const T (&y)[4]) const {
    T v[4] = {y[0] * scale, y[1] * scale, y[2] * scale, y[3] * scale};
    if (q == 0) v[0] = y[0] * post_first;
    if (4 * q + 3 == n - 1) v[3] = y[3] * post_last;
    T* p = dst + 4 * q;
    if (sizeof(T) == 4 && (reinterpret_cast<std::uintptr_t>(dst) & 15) == 0) {
      *reinterpret_cast<float4*>(p) = make_float4(static_cast<float>(v[0]), static_cast<float>(v[1]),
                                                  static_cast<float>(v[2]), static_cast<float>(v[3]));
    } else {
      for (int i = 0; i < 4; ++i) p[i] = v[i];
    }
  }
};

/// The kernel's algorithm: the launch's, with what the kernel is compiled for made constant (the algorithm, the FFT
/// length and the row length, which the launcher checked against the launch's).
template <R2RAlgorithm Algorithm, std::int64_t FftLength>
__device__ AxisAlgorithm compiled_algorithm(const FusedR2RArgs& args) {
  constexpr std::int64_t row_length = fused_row_length(Algorithm, FftLength);
  static_assert(row_length > 0, "an algorithm the fused kernels run");
  AxisAlgorithm al = args.algorithm;
  al.algorithm = Algorithm;
  al.fft_length = FftLength;
  al.n = row_length;
  return al;
}

/// A thread's row of the block: its index, whether it exists (every thread of the block takes part in the FFTs'
/// shared-memory exchanges, also on a missing last row), and its loads and stores.
template <class FFT>
struct BlockRow {
  using T = typename FFT::value_type::value_type;
  std::int64_t row;
  bool active;
  RowAccess<T> io;

  __device__ BlockRow(const FusedR2RArgs& args, const AxisAlgorithm& al)
      : row(static_cast<std::int64_t>(blockIdx.x) * FFT::ffts_per_block + threadIdx.y),
        active(row < args.rows.rows),
        io(args, row, active, al.n) {}
  /// The row's element i, with the input edge factors (the algebra's `load`).
  __device__ auto loader() const {
    return [this](int i) { return io.load(i); };
  }
  /// Stores the row's element i, with the output edge factors and the scale (the algebra's `store`).
  __device__ auto storer() const {
    return [this](int i, T v) { io.store(i, v); };
  }
};

/// Runs the block's FFT on `thread_data` in the kernel's dynamic shared memory, then waits for every thread: in place,
/// every row is read whole before any of it is written.
template <class FFT>
__device__ __forceinline__ void execute_then_sync(typename FFT::value_type* thread_data) {
  extern __shared__ __align__(alignof(float4)) unsigned char fused_r2r_shared[];
  FFT().execute(thread_data, reinterpret_cast<typename FFT::value_type*>(fused_r2r_shared));
  __syncthreads();
}

/// Whether a folded kernel's rows can move as quads of neighbouring reals (fused_type2_quad_pairs,
/// fused_type3_quad_outputs): the row length a multiple of 4, each thread's pairs p = e * stride + t filling the
/// row's n/2 pairs exactly with an even count per thread (its first half then pairs with the mirror thread's second
/// half), and room in the shared memory for half of every row's pairs. `Ept` and `Length`: the FFT's elements per
/// thread and pairs per row on the side that moves quads.
template <class FFT, unsigned Ept, unsigned Length>
constexpr bool quads_fit() {
  using complex_type = typename FFT::value_type;
  return cufftdx::size_of<FFT>::value % 4 == 0 && Ept % 2 == 0 && Ept * FFT::stride == Length &&
         2 * Length == cufftdx::size_of<FFT>::value &&
         FFT::shared_memory_size >= FFT::ffts_per_block * (Length / 2) * sizeof(complex_type);
}

/// The shared-memory slots of this thread's row for the quads' exchange: half its pairs.
template <class FFT, unsigned Length>
__device__ __forceinline__ typename FFT::value_type* quad_exchange() {
  extern __shared__ __align__(alignof(float4)) unsigned char fused_r2r_shared[];
  return reinterpret_cast<typename FFT::value_type*>(fused_r2r_shared) + threadIdx.y * (Length / 2);
}

/// Folded type 2 (DCT-II, DST-II): each thread loads the 16-byte quads of the pairs in the first half of its
/// registers (pairs q < n/4: 4-byte loads of stride 2 and a reversed odd half before, which held the kernel to a
/// third of the memory bandwidth), keeps pair q and hands pair n/2-1-q, which register input_ept-1-e of thread
/// stride-1-t holds, over through shared memory. Every thread of the block takes part (a missing row loads zeros).
template <class FFT>
__device__ __forceinline__ void load_type2_quads(const AxisAlgorithm& al, const BlockRow<FFT>& r,
                                                 typename FFT::value_type* thread_data) {
  using complex_type = typename FFT::value_type;
  using T = typename BlockRow<FFT>::T;
  constexpr unsigned ept = FFT::input_ept, half = FFT::input_length / 2;
  complex_type* exchange = quad_exchange<FFT, FFT::input_length>();
  // The row and alignment tests come once, before the loads: each path's loads are then straight-line code.
  T x[ept / 2][4];
  if (r.active && r.io.src_quads_aligned()) {
#pragma unroll
    for (unsigned e = 0; e < ept / 2; ++e)
      r.io.load_aligned_quad(static_cast<int>(e * FFT::stride + threadIdx.x), x[e]);
  } else {
#pragma unroll
    for (unsigned e = 0; e < ept / 2; ++e) {
      x[e][0] = x[e][1] = x[e][2] = x[e][3] = T(0);
      if (r.active) r.io.load_quad(static_cast<int>(e * FFT::stride + threadIdx.x), x[e]);
    }
  }
#pragma unroll
  for (unsigned e = 0; e < ept / 2; ++e) {
    const int q = static_cast<int>(e * FFT::stride + threadIdx.x);
    FusedComplex<T> low{}, high{};
    fused_type2_quad_pairs(al, x[e], low, high);
    thread_data[e] = complex_type{low.re, low.im};
    exchange[half - 1 - q] = complex_type{high.re, high.im};  // pair n/2-1-q, at its place in the second half
  }
  __syncthreads();
#pragma unroll
  for (unsigned e = ept / 2; e < ept; ++e) thread_data[e] = exchange[e * FFT::stride + threadIdx.x - half];
  __syncthreads();  // the FFT reuses the shared memory
}

/// Folded type 3 (DCT-III, DST-III), after the FFT: the pairs in the second half of each thread's registers go to
/// the mirror thread through shared memory, and each thread stores the quads of its first-half pairs q with pair
/// n/2-1-q (16-byte stores, against 4-byte stores of stride 2 and a reversed odd half). Called by every thread of
/// the block; a missing row stores nothing.
template <class FFT>
__device__ __forceinline__ void store_type3_quads(const AxisAlgorithm& al, const BlockRow<FFT>& r,
                                                  const typename FFT::value_type* thread_data) {
  using complex_type = typename FFT::value_type;
  using T = typename BlockRow<FFT>::T;
  constexpr unsigned ept = FFT::output_ept, half = FFT::output_length / 2;
  complex_type* exchange = quad_exchange<FFT, FFT::output_length>();
#pragma unroll
  for (unsigned e = ept / 2; e < ept; ++e) exchange[e * FFT::stride + threadIdx.x - half] = thread_data[e];
  __syncthreads();
  if (!r.active) return;
#pragma unroll
  for (unsigned e = 0; e < ept / 2; ++e) {
    const int q = static_cast<int>(e * FFT::stride + threadIdx.x);
    const complex_type high = exchange[half - 1 - q];
    T y[4];
    fused_type3_quad_outputs(al, FusedComplex<T>{thread_data[e].x, thread_data[e].y}, FusedComplex<T>{high.x, high.y},
                             y);
    r.io.store_quad(q, y);
  }
}

/// Types 1 and 2 (R2C of length L): DCT-I/DST-I from the even/odd extension (L = 2(n-1) / 2(n+1)), DCT-II/DST-II
/// from the even/odd reordering (L = n). `Folded`: cuFFTDx's folded real mode, whose thread elements are pairs of
/// neighbouring reals (2m, 2m+1) of the FFT's input, transformed as a C2C FFT of L/2 points (half the arithmetic of
/// the normal mode, where each thread element is one real). `Algorithm`: dct1_even_extension, dst1_odd_extension or
/// type2_reorder.
template <class FFT, bool Folded, R2RAlgorithm Algorithm>
__launch_bounds__(FFT::max_threads_per_block) __global__ void fused_r2r_r2c(FusedR2RArgs args) {
  using T = typename BlockRow<FFT>::T;
  using complex_type = typename FFT::value_type;
  constexpr std::int64_t L = cufftdx::size_of<FFT>::value;
  const AxisAlgorithm al = compiled_algorithm<Algorithm, L>(args);
  const BlockRow<FFT> r(args, al);
  complex_type thread_data[FFT::storage_size];
  if constexpr (Folded && Algorithm == R2RAlgorithm::type2_reorder &&
                quads_fit<FFT, FFT::input_ept, FFT::input_length>()) {
    load_type2_quads<FFT>(al, r, thread_data);
  } else if constexpr (Folded) {
#pragma unroll
    for (unsigned e = 0; e < FFT::input_ept; ++e) {
      const int m = static_cast<int>(e * FFT::stride + threadIdx.x);
      T lo = 0, hi = 0;
      if (r.active && m < FFT::input_length) {
        lo = fused_r2c_load<T>(al, 2 * m, r.loader());
        hi = fused_r2c_load<T>(al, 2 * m + 1, r.loader());
      }
      thread_data[e] = complex_type{lo, hi};
    }
  } else {
    auto* real_data = reinterpret_cast<T*>(thread_data);
#pragma unroll
    for (unsigned e = 0; e < FFT::input_ept; ++e) {
      const int j = static_cast<int>(e * FFT::stride + threadIdx.x);
      real_data[e] = (r.active && j < L) ? fused_r2c_load<T>(al, j, r.loader()) : T(0);
    }
  }
  execute_then_sync<FFT>(thread_data);
  if (!r.active) return;
  if constexpr (Algorithm == R2RAlgorithm::type2_reorder) {
    const ThreadTwiddles<T, fused_r2c_store_angle(L), FFT::stride> twiddles;
    for_each_register<FFT::output_ept>([&](auto e) {
      const int k = static_cast<int>(e * FFT::stride + threadIdx.x);
      if (register_inside<FFT, decltype(e)::value, L / 2 + 1>() || k <= L / 2)
        fused_r2c_store<T>(al, k, FusedComplex<T>{thread_data[e].x, thread_data[e].y}, twiddles.at(e), r.storer());
    });
  } else {
#pragma unroll
    for (unsigned e = 0; e < FFT::output_ept; ++e) {
      const int k = static_cast<int>(e * FFT::stride + threadIdx.x);
      if (k <= L / 2)
        fused_r2c_store<T>(al, k, FusedComplex<T>{thread_data[e].x, thread_data[e].y}, FusedComplex<T>{1, 0},
                           r.storer());
    }
  }
}

/// Type 3 (C2R of length n), the body of the kernels below: the Hermitian half spectrum on load, the even/odd
/// unreordering on store. `Folded`: the output's thread elements are pairs of neighbouring reals (2m, 2m+1), as in
/// fused_r2r_r2c. `StraightLine`: the loads' form (below).
template <class FFT, bool Folded, bool StraightLine>
__device__ __forceinline__ void fused_r2r_c2r_body(const FusedR2RArgs& args) {
  using complex_type = typename FFT::value_type;
  using T = typename BlockRow<FFT>::T;
  const AxisAlgorithm al = compiled_algorithm<R2RAlgorithm::type3_reorder, cufftdx::size_of<FFT>::value>(args);
  const BlockRow<FFT> r(args, al);
  constexpr std::int64_t n = cufftdx::size_of<FFT>::value;
  complex_type thread_data[FFT::storage_size];
  const ThreadTwiddles<T, fused_c2r_load_angle(n), FFT::stride> twiddles;
  // Straight-line: the row test comes once, before the loads, and an index test only in a register that can pass
  // the spectrum's end, so the loads are issued together. Otherwise each load keeps its own test.
  if constexpr (StraightLine) {
    if (r.active) {
      for_each_register<FFT::input_ept>([&](auto e) {
        const int j = static_cast<int>(e * FFT::stride + threadIdx.x);
        FusedComplex<T> h{0, 0};
        if (register_inside<FFT, decltype(e)::value, n / 2 + 1>() || j <= n / 2)
          h = fused_c2r_load<T, true>(al, j, twiddles.at(e), r.loader());
        thread_data[e] = complex_type{h.re, h.im};
      });
    } else {
#pragma unroll
      for (unsigned e = 0; e < FFT::storage_size; ++e) thread_data[e] = complex_type{0, 0};
    }
  } else {
    for_each_register<FFT::input_ept>([&](auto e) {
      const int j = static_cast<int>(e * FFT::stride + threadIdx.x);
      FusedComplex<T> h{0, 0};
      if (r.active && j <= n / 2) h = fused_c2r_load<T>(al, j, twiddles.at(e), r.loader());
      thread_data[e] = complex_type{h.re, h.im};
    });
  }
  execute_then_sync<FFT>(thread_data);
  if constexpr (Folded && quads_fit<FFT, FFT::output_ept, FFT::output_length>()) {
    store_type3_quads<FFT>(al, r, thread_data);  // every thread: it exchanges through shared memory
    return;
  }
  if (!r.active) return;
  if constexpr (Folded) {
#pragma unroll
    for (unsigned e = 0; e < FFT::output_ept; ++e) {
      const int m = static_cast<int>(e * FFT::stride + threadIdx.x);
      if (m < FFT::output_length) {
        fused_c2r_store<T>(al, 2 * m, thread_data[e].x, r.storer());
        fused_c2r_store<T>(al, 2 * m + 1, thread_data[e].y, r.storer());
      }
    }
  } else {
    const auto* real_data = reinterpret_cast<const T*>(thread_data);
#pragma unroll
    for (unsigned e = 0; e < FFT::output_ept; ++e) {
      const int m = static_cast<int>(e * FFT::stride + threadIdx.x);
      if (m < n) fused_c2r_store<T>(al, m, real_data[e], r.storer());
    }
  }
}

/// The library's type-3 kernel. Up to 16 elements per thread the loads are straight-line code (DCT-III f32
/// [16384, 4096] 1.48 -> 1.39x rfft on an H100). At 32, issued together, they took this kernel from 64 to 92
/// registers, one block of 512 threads per SM instead of two ([4096, 16384] 1.73 -> 1.90x), so here each load keeps
/// its test; the f32 C2R of 16384 takes fused_r2r_c2r_min_blocks instead (fused_r2r_length.cu.in).
template <class FFT, bool Folded>
__launch_bounds__(FFT::max_threads_per_block) __global__ void fused_r2r_c2r(FusedR2RArgs args) {
  fused_r2r_c2r_body<FFT, Folded, (FFT::elements_per_thread <= 16)>(args);
}

/// The straight-line loads at any number of elements per thread, within the registers that `MinBlocks` blocks per
/// SM leave. The library's f32 C2R of 16384 (32 per thread, 512 threads) runs it with 2: 64 registers and 52 bytes of
/// spill, DCT-III f32 [4096, 16384] 1.74 -> 1.50x rfft on an H100. A kernel of its own: naming a
/// minimum of blocks, even 1, changes ptxas's register choice (the library's C2R of 16384 takes 96 registers with
/// `__launch_bounds__(512, 1)`, 64 with `__launch_bounds__(512)`).
template <class FFT, bool Folded, unsigned MinBlocks>
__launch_bounds__(FFT::max_threads_per_block, MinBlocks) __global__ void fused_r2r_c2r_min_blocks(FusedR2RArgs args) {
  fused_r2r_c2r_body<FFT, Folded, true>(args);
}

/// Type 4 of even length n (C2C of length n/2): pre-twiddle on load, post-twiddle on store.
template <class FFT>
__launch_bounds__(FFT::max_threads_per_block) __global__ void fused_r2r_c2c(FusedR2RArgs args) {
  using complex_type = typename FFT::value_type;
  using T = typename BlockRow<FFT>::T;
  constexpr std::int64_t L = cufftdx::size_of<FFT>::value;
  const AxisAlgorithm al = compiled_algorithm<R2RAlgorithm::type4_half_complex, L>(args);
  const BlockRow<FFT> r(args, al);
  complex_type thread_data[FFT::storage_size];
  {
    const ThreadTwiddles<T, fused_c2c_load_angle(2 * L), FFT::stride> twiddles;
    for_each_register<FFT::elements_per_thread>([&](auto e) {
      const int j = static_cast<int>(e * FFT::stride + threadIdx.x);
      FusedComplex<T> t{0, 0};
      if (r.active && j < L) t = fused_c2c_load<T>(al, j, twiddles.at(e), r.loader());
      thread_data[e] = complex_type{t.re, t.im};
    });
  }
  execute_then_sync<FFT>(thread_data);
  if (!r.active) return;
  const ThreadTwiddles<T, fused_c2c_store_angle(2 * L), FFT::stride> twiddles;
  for_each_register<FFT::elements_per_thread>([&](auto e) {
    const int k = static_cast<int>(e * FFT::stride + threadIdx.x);
    if (k < L)
      fused_c2c_store<T>(al, k, FusedComplex<T>{thread_data[e].x, thread_data[e].y}, twiddles.at(e), r.storer());
  });
}

}  // namespace cuplan::detail::fused_r2r
