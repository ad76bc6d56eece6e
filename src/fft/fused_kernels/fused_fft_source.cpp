// SPDX-License-Identifier: Apache-2.0
// The fused FFT kernels' source (see fused_fft_kernel.hpp): one NVRTC program holding the user's callbacks and a
// cuFFTDx kernel per direction the transform type needs, whose loads call the prolog and whose stores call the
// epilog. Compiled and cached by fused_fft_compile.cpp. Host code only.

#include <fmt/format.h>

#include <string>

#include "fft/callbacks/callback_source.hpp"
#include "fft/callbacks/callback_types.hpp"
#include "fft/fused_kernels/fused_fft_kernel.hpp"

namespace cuplan::detail::fused_fft {
namespace {

const char* real_name(DType precision) {
  return precision == f64 ? "double" : "float";
}

// The element types the program loads and stores (cuFFT's callback types).
const char* in_type(const KernelSpec& s) {
  return device_element_type(s.type == FFTType::r2c ? s.precision : s.precision.complex());
}
const char* out_type(const KernelSpec& s) {
  return device_element_type(s.type == FFTType::c2r ? s.precision : s.precision.complex());
}

// The prolog's value at element `at` (an expression of the generated source).
std::string prolog_call(const std::string& at) {
  return fmt::format("{}(const_cast<void*>(rows.in), {}, rows.prolog_info, nullptr)",
                     callback_entry_symbol(CallbackRole::prolog), at);
}

// Folded R2C: element `index` of the row is the pair of reals 2 index and 2 index + 1, one 8-byte load where the
// row's start allows it (in_pairs), else two.
std::string folded_load(const KernelSpec& s) {
  const std::string pair =
      s.prolog
          ? fmt::format("lo = {}; hi = {};", prolog_call("at"), prolog_call("at + 1"))
          : fmt::format(
                "if (in_pairs) {{ const {0} v = reinterpret_cast<const {0}*>(static_cast<const real_type*>(rows.in) "
                "+ in_base)[index]; lo = v.x; hi = v.y; }} else {{ lo = static_cast<const real_type*>(rows.in)[at]; "
                "hi = static_cast<const real_type*>(rows.in)[at + 1]; }}",
                device_element_type(s.precision.complex()));
  return fmt::format(
      "{{ real_type lo, hi; const unsigned long long at = in_base + 2ull * index; {} data[i] = complex_type{{lo, hi}}; "
      "}}",
      pair);
}

// Folded C2R: element `index` of the result holds the reals 2 index and 2 index + 1.
std::string folded_store(const KernelSpec& s) {
  const std::string pair =
      s.epilog
          ? fmt::format(
                "{0}(rows.out, at, data[i].x, rows.epilog_info, nullptr); {0}(rows.out, at + 1, data[i].y, "
                "rows.epilog_info, nullptr);",
                callback_entry_symbol(CallbackRole::epilog))
          : fmt::format(
                "const real_type lo = data[i].x * static_cast<real_type>(rows.scale), hi = data[i].y * "
                "static_cast<real_type>(rows.scale); if (out_pairs) reinterpret_cast<{0}*>(static_cast<real_type*>"
                "(rows.out) + out_base)[index] = {0}{{lo, hi}}; else {{ static_cast<real_type*>(rows.out)[at] = lo; "
                "static_cast<real_type*>(rows.out)[at + 1] = hi; }}",
                device_element_type(s.precision.complex()));
  return fmt::format("{{ const unsigned long long at = out_base + 2ull * index; {} }}", pair);
}

std::string load_expression(const KernelSpec& s) {
  if (s.type == FFTType::r2c && folded_real_mode(s.type, s.precision, s.length)) return folded_load(s);
  const std::string raw = fmt::format("static_cast<const {}*>(rows.in)[in_base + index]", in_type(s));
  const std::string value = s.prolog ? prolog_call("in_base + index") : raw;
  if (s.type == FFTType::r2c) return fmt::format("real_data[i] = {};", value);
  return fmt::format("{{ const {} v = {}; data[i] = complex_type{{v.x, v.y}}; }}", in_type(s), value);
}

std::string store_expression(const KernelSpec& s) {
  // Without an epilog the normalization's factor multiplies the stored value; with one the epilog sees the value
  // unscaled and the factor stays a pass of its own, as on the cuFFT route.
  if (s.type == FFTType::c2r && folded_real_mode(s.type, s.precision, s.length)) return folded_store(s);
  const bool real = s.type == FFTType::c2r;
  const std::string value = real ? (s.epilog ? "real_data[i]" : "real_data[i] * static_cast<real_type>(rows.scale)")
                            : s.epilog ? fmt::format("{}{{data[i].x, data[i].y}}", out_type(s))
                                       : fmt::format(
                                             "{}{{data[i].x * static_cast<real_type>(rows.scale), data[i].y * "
                                             "static_cast<real_type>(rows.scale)}}",
                                             out_type(s));
  if (s.epilog)
    return fmt::format("{}(rows.out, out_base + index, {}, rows.epilog_info, nullptr);",
                       callback_entry_symbol(CallbackRole::epilog), value);
  return fmt::format("static_cast<{}*>(rows.out)[out_base + index] = {};", out_type(s), value);
}

// Elements per thread: cuFFTDx's suggestion, except where the same description compiled ahead of time measured
// faster with another value: c64 at 1024 takes 16 instead of 32, one FFT of 64 threads per block instead of two of
// 32 (the convolution kernel of [65536, 1024] on an H100, src/convolution/cuda/fused_length.cu.in: 0.453 ms ->
// 0.397-0.401 ms; a forward FFT with a scaling prolog on an H200, bench/prototypes/fused_fft_shapes_bench: 1.06x ->
// 1.02x the plain transform). Elsewhere that benchmark found cuFFTDx's suggestion best or within 2 %.
std::string elements_per_thread(const KernelSpec& s) {
  if (s.type == FFTType::c2c && s.precision == f32 && s.length == 1024) return "16";
  return "base::elements_per_thread";
}

std::string kernel_text(const char* direction) {
  return fmt::format(
      "extern \"C\" __global__ void __launch_bounds__(cuplan_fused_desc<cufftdx::fft_direction::{0}>::type::"
      "max_threads_per_block) cuplan_fused_fft_{0}(cuplan_fused_rows rows) {{\n"
      "  cuplan_fused_body<typename cuplan_fused_desc<cufftdx::fft_direction::{0}>::type>(rows);\n"
      "}}\n"
      "extern \"C\" __device__ unsigned cuplan_fused_config_{0}[4] = {{\n"
      "  cuplan_fused_desc<cufftdx::fft_direction::{0}>::type::block_dim.x,\n"
      "  cuplan_fused_desc<cufftdx::fft_direction::{0}>::type::block_dim.y,\n"
      "  cuplan_fused_desc<cufftdx::fft_direction::{0}>::type::ffts_per_block,\n"
      "  cuplan_fused_desc<cufftdx::fft_direction::{0}>::type::shared_memory_size}};\n",
      direction);
}

}  // namespace

std::string kernel_source(const KernelSpec& s) {
  std::string text = "#include <cufftdx.hpp>\n#include <cuplan/fft_callback_device.hpp>\n";
  // A callback's text: its source, or for LTO-IR the declaration nvJitLink resolves (global scope, C++ linkage, as
  // cuFFT declares it). One source may define both functions (the cuFFT route compiles each callback on its own): it
  // is included once.
  const auto callback_text = [&](const InlinedCallback& c, CallbackRole role) {
    if (c.is_lto()) return fmt::format("__device__ {};\n", callback_signature(role, c.element, c.symbol));
    const bool shared = role == CallbackRole::epilog && s.prolog && !s.prolog->is_lto() && s.prolog->source == c.source;
    return shared ? std::string() : c.source;
  };
  for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog})
    if (const InlinedCallback* c = (role == CallbackRole::prolog ? s.prolog : s.epilog).get())
      text += checked_callback_source(callback_text(*c, role), c->symbol, role, c->element, c->name);
  text += fmt::format(
      "#line 1 \"cuplan-fused-fft\"\n"
      "struct cuplan_fused_rows {{\n"
      "  const void* in; void* out; long long rows; long long idist; long long odist;\n"
      "  void* prolog_info; void* epilog_info; double scale;\n"
      "}};\n"
      "template <cufftdx::fft_direction D> struct cuplan_fused_desc {{\n"
      "  // The real mode comes before the description is complete: a folded length may exceed the normal limit.\n"
      "  using base = decltype(cufftdx::Block() + cufftdx::Size<{0}>() + cufftdx::Type<cufftdx::fft_type::{1}>(){6} +\n"
      "                        cufftdx::Precision<{2}>() + cufftdx::Direction<D>() + cufftdx::SM<{3}>());\n"
      "  // cuFFTDx's suggested FFTs per block for that number of elements per thread.\n"
      "  using shaped = decltype(base() + cufftdx::ElementsPerThread<{7}>());\n"
      "  using type = decltype(shaped() + cufftdx::FFTsPerBlock<shaped::suggested_ffts_per_block>());\n"
      "  static_assert(!type::requires_workspace, \"cuplan: this length needs a cuFFTDx workspace\");\n"
      "}};\n"
      "template <class FFT> __device__ __forceinline__ void cuplan_fused_body(const cuplan_fused_rows& rows) {{\n"
      "  using complex_type = typename FFT::value_type;\n"
      "  using real_type = typename complex_type::value_type;\n"
      "  extern __shared__ __align__(16) unsigned char cuplan_fused_shared[];\n"
      "  const long long row = static_cast<long long>(blockIdx.x) * FFT::ffts_per_block + threadIdx.y;\n"
      "  // Every thread takes part in the FFT's shared-memory exchanges, also on a missing last row.\n"
      "  const bool active = row < rows.rows;\n"
      "  complex_type data[FFT::storage_size];\n"
      "  [[maybe_unused]] real_type* real_data = reinterpret_cast<real_type*>(data);\n"
      "  const unsigned long long in_base = static_cast<unsigned long long>(row * rows.idist);\n"
      "  // Folded real rows move as pairs of reals: one 8-byte (16-byte) access where the row's start allows it.\n"
      "  [[maybe_unused]] const bool in_pairs =\n"
      "      reinterpret_cast<unsigned long long>(rows.in) % (2 * sizeof(real_type)) == 0 && rows.idist % 2 == 0;\n"
      "  [[maybe_unused]] const bool out_pairs =\n"
      "      reinterpret_cast<unsigned long long>(rows.out) % (2 * sizeof(real_type)) == 0 && rows.odist % 2 == 0;\n"
      "  // Where every thread's last index lies inside the row the loops hold no test: the loads then form one block\n"
      "  // of straight-line code, which lets the compiler issue them together and load a callback's user data once.\n"
      "  constexpr bool in_whole = FFT::input_ept * FFT::stride == FFT::input_length;\n"
      "  constexpr bool out_whole = FFT::output_ept * FFT::stride == FFT::output_length;\n"
      "  if (active) {{\n"
      "#pragma unroll\n"
      "    for (unsigned i = 0; i < FFT::input_ept; ++i) {{\n"
      "      const unsigned index = i * FFT::stride + threadIdx.x;\n"
      "      if (in_whole || index < FFT::input_length) {4}\n"
      "    }}\n"
      "  }} else {{\n"
      "#pragma unroll\n"
      "    for (unsigned i = 0; i < FFT::storage_size; ++i) data[i] = complex_type{{}};\n"
      "  }}\n"
      "  FFT().execute(data, reinterpret_cast<complex_type*>(cuplan_fused_shared));\n"
      "  if (!active) return;\n"
      "  const unsigned long long out_base = static_cast<unsigned long long>(row * rows.odist);\n"
      "#pragma unroll\n"
      "  for (unsigned i = 0; i < FFT::output_ept; ++i) {{\n"
      "    const unsigned index = i * FFT::stride + threadIdx.x;\n"
      "    if (out_whole || index < FFT::output_length) {5}\n"
      "  }}\n"
      "}}\n",
      s.length,
      s.type == FFTType::c2c   ? "c2c"
      : s.type == FFTType::r2c ? "r2c"
                               : "c2r",
      real_name(s.precision), s.sm * 10, load_expression(s), store_expression(s),
      folded_real_mode(s.type, s.precision, s.length)
          ? " +\n                        cufftdx::RealFFTOptions<cufftdx::complex_layout::natural, "
            "cufftdx::real_mode::folded>()"
          : "",
      elements_per_thread(s));
  if (program_holds(s.type, Direction::forward)) text += kernel_text("forward");
  if (program_holds(s.type, Direction::inverse)) text += kernel_text("inverse");
  return text;
}

}  // namespace cuplan::detail::fused_fft
