// SPDX-License-Identifier: Apache-2.0
#pragma once
// FFT prolog and epilog callbacks (docs/fft.md, "Callbacks"): user code run on each element a transform loads
// (prolog) or stores (epilog), inside the transform instead of as a separate pass over memory. FFTOptions::prolog
// and FFTOptions::epilog take one each. The GPU forms are linked into cuFFT's kernels (LTO callbacks); the host form
// runs in FFTW's execution, chunk by chunk while the chunk is in cache.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cuplan/export.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// A host prolog: returns the element the transform uses in place of `static_cast<const T*>(data_in)[offset]`.
/// `caller_info` points to a cuplan::fft_callback::Info (cuplan/fft_callback_device.hpp).
template <class T>
using HostProlog = std::function<T(const void* data_in, std::uint64_t offset, void* caller_info)>;
/// A host epilog: stores `element`, the transform's result at `offset` (usually to
/// `static_cast<T*>(data_out)[offset]`, after changing it).
template <class T>
using HostEpilog = std::function<void(void* data_out, std::uint64_t offset, T element, void* caller_info)>;

/// One prolog or epilog of an FFT. Empty by default (no callback). Copies share the code (and a host callable);
/// the identity that plan caches compare is that of the code: the same source and symbol, or the same LTO-IR
/// bytes and symbol, or copies of one host callable.
///
/// The GPU forms define a device function with cuFFT's LTO callback signature for the transform's element type:
/// a prolog `T f(void* data_in, unsigned long long offset, void* caller_info, void* shared)` and an epilog
/// `void f(void* data_out, unsigned long long offset, T element, void* caller_info, void* shared)`, with T float,
/// double, float2 (= cufftComplex) or double2 (= cufftDoubleComplex): the input element type for a prolog (real
/// for R2C), the output element type for an epilog (real for C2R).
class CUPLAN_API FFTCallback {
 public:
  /// How the callback is given.
  enum class Form { none, cuda_source, lto_ir, host };

  /// No callback.
  FFTCallback() = default;

  /// CUDA C++ `source` defining the device function `symbol` (any C++ name, e.g. "filters::scale"), compiled by
  /// cuplan with NVRTC to LTO-IR when a plan is made (once per process for the same source, symbol and GPU
  /// architecture). The source may include <cuplan/fft_callback_device.hpp>. `user_data`: a device pointer
  /// passed on through the callback's caller_info.
  static FFTCallback cuda_source(std::string source, std::string symbol, void* user_data = nullptr);
  /// LTO-IR built with `nvcc -dlto` (e.g. by cuplan_add_fft_callback in CMake), defining the device function
  /// `symbol` at global namespace scope with C++ linkage (not extern "C") and exactly the signature above: cuFFT
  /// declares the callback by that name and links its C++ name. `user_data` as for cuda_source.
  static FFTCallback lto_ir(std::vector<unsigned char> bytes, std::string symbol, void* user_data = nullptr);
  /// The same, from `size` bytes at `bytes` (copied).
  static FFTCallback lto_ir(const void* bytes, std::size_t size, std::string symbol, void* user_data = nullptr);

  /// A host prolog for CPU execution (FFTW), with element type T (float, double, std::complex<float> or
  /// std::complex<double>, the input type of the transform). `user_data`: a host pointer.
  template <class T, class F>
  static FFTCallback host_prolog(F&& function, void* user_data = nullptr) {
    static_assert(is_element<T>, "FFTCallback: T must be float, double, std::complex<float> or std::complex<double>");
    static_assert(std::is_invocable_r_v<T, std::decay_t<F>&, const void*, std::uint64_t, void*>,
                  "FFTCallback::host_prolog<T>: expected a callable T(const void* data_in, std::uint64_t offset, "
                  "void* caller_info)");
    if (is_null(function)) return make_host(HostFunction{}, HostRun{}, user_data);  // InvalidArgument
    auto callable = std::make_shared<std::decay_t<F>>(std::forward<F>(function));
    return make_host(HostFunction(HostProlog<T>([callable](const void* in, std::uint64_t offset, void* info) {
                       return static_cast<T>((*callable)(in, offset, info));
                     })),
                     HostRun{&prolog_run<T, std::decay_t<F>>, callable}, user_data);
  }
  /// A host epilog for CPU execution, with element type T (the output type of the transform).
  template <class T, class F>
  static FFTCallback host_epilog(F&& function, void* user_data = nullptr) {
    static_assert(is_element<T>, "FFTCallback: T must be float, double, std::complex<float> or std::complex<double>");
    static_assert(std::is_invocable_v<std::decay_t<F>&, void*, std::uint64_t, T, void*>,
                  "FFTCallback::host_epilog<T>: expected a callable void(void* data_out, std::uint64_t offset, T "
                  "element, void* caller_info)");
    if (is_null(function)) return make_host(HostFunction{}, HostRun{}, user_data);  // InvalidArgument
    auto callable = std::make_shared<std::decay_t<F>>(std::forward<F>(function));
    return make_host(HostFunction(HostEpilog<T>([callable](void* out, std::uint64_t offset, T element, void* info) {
                       (*callable)(out, offset, element, info);
                     })),
                     HostRun{&epilog_run<T, std::decay_t<F>>, callable}, user_data);
  }

  /// How the callback is given (Form::none when empty).
  Form form() const noexcept { return form_; }
  /// True unless empty.
  explicit operator bool() const noexcept { return form_ != Form::none; }
  /// The device function's name (empty for host callables).
  const std::string& symbol() const noexcept;
  /// The user data pointer.
  void* user_data() const noexcept { return user_data_; }
  /// The same callback with another user data pointer.
  FFTCallback with_user_data(void* user_data) const {
    FFTCallback copy = *this;
    copy.user_data_ = user_data;
    return copy;
  }

  /// \cond INTERNAL
  /// The host callables, one alternative per role and element type.
  using HostFunction =
      std::variant<std::monostate, HostProlog<float>, HostProlog<double>, HostProlog<std::complex<float>>,
                   HostProlog<std::complex<double>>, HostEpilog<float>, HostEpilog<double>,
                   HostEpilog<std::complex<float>>, HostEpilog<std::complex<double>>>;
  /// The code of a GPU callback, shared by copies.
  struct Code {
    std::string source;              ///< cuda_source
    std::vector<unsigned char> lto;  ///< lto_ir
    std::string symbol;              ///< the device function
    std::uint64_t hash[2] = {0, 0};  ///< of the form, the source or bytes and the symbol
  };
  /// Shared code (GPU forms), null otherwise.
  const std::shared_ptr<const Code>& code() const noexcept { return code_; }
  /// Shared host callable (host form), null otherwise.
  const std::shared_ptr<const HostFunction>& host() const noexcept { return host_; }
  /// The host callable's loop over `count` elements `step` apart from offset `first`, instantiated for the
  /// callable's own type so that its call inlines: a prolog stores its values at `values[j * step]`, an epilog reads
  /// and stores through `data` (`values` unused).
  struct HostRun {
    using Loop = void (*)(void* callable, void* data, std::uint64_t first, std::int64_t count, std::int64_t step,
                          void* values, void* caller_info);
    Loop loop = nullptr;
    std::shared_ptr<void> callable;
  };
  /// The loop of a host callable (null loop for the other forms).
  const HostRun& host_run() const noexcept { return host_run_; }
  /// The identity plan caches compare: a hash of the code, or a number unique to the host callable.
  std::uint64_t identity(int word) const noexcept;
  /// \endcond

 private:
  template <class T>
  static constexpr bool is_element = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                     std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
  static FFTCallback make_host(HostFunction function, HostRun run, void* user_data);
  template <class F>
  struct is_std_function : std::false_type {};
  template <class R, class... A>
  struct is_std_function<std::function<R(A...)>> : std::true_type {};
  /// A null function pointer or an empty std::function.
  template <class F>
  static bool is_null(const F& f) {
    if constexpr (std::is_pointer_v<std::decay_t<F>>)
      return f == nullptr;
    else if constexpr (is_std_function<std::decay_t<F>>::value)
      return !f;
    else
      return false;
  }
  template <class T, class C>
  static void prolog_run(void* callable, void* data, std::uint64_t first, std::int64_t count, std::int64_t step,
                         void* values, void* caller_info) {
    C& f = *static_cast<C*>(callable);
    T* out = static_cast<T*>(values);
    for (std::int64_t j = 0; j < count; ++j)
      out[j * step] =
          static_cast<T>(f(static_cast<const void*>(data), first + static_cast<std::uint64_t>(j * step), caller_info));
  }
  template <class T, class C>
  static void epilog_run(void* callable, void* data, std::uint64_t first, std::int64_t count, std::int64_t step,
                         void* /*values*/, void* caller_info) {
    C& f = *static_cast<C*>(callable);
    const T* in = static_cast<const T*>(data);
    for (std::int64_t j = 0; j < count; ++j) {
      const std::uint64_t at = first + static_cast<std::uint64_t>(j * step);
      f(data, at, in[at], caller_info);
    }
  }
  static FFTCallback with_code(Form form, std::shared_ptr<const Code> code, void* user_data);

  Form form_ = Form::none;
  std::shared_ptr<const Code> code_;
  std::shared_ptr<const HostFunction> host_;
  HostRun host_run_;
  std::uint64_t host_id_ = 0;
  void* user_data_ = nullptr;
};

/// What cuplan's NVRTC callback compilations did in this process (fft_callback_stats()).
struct FFTCallbackStats {
  /// Sources compiled to LTO-IR with NVRTC (each distinct source, symbol, role, element type and architecture once).
  std::uint64_t compilations = 0;
  /// Plans whose source callback was found already compiled.
  std::uint64_t cache_hits = 0;
  /// Wall time of all compilations (milliseconds).
  double compile_ms = 0.0;
  /// Wall time of the last compilation (milliseconds; 0 before the first).
  double last_compile_ms = 0.0;
};

/// The counters of callback compilations so far (process-wide, thread-safe).
CUPLAN_API FFTCallbackStats fft_callback_stats() noexcept;

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
