// SPDX-License-Identifier: Apache-2.0
// A callback's CUDA source as NVRTC compiles it (see callback_source.hpp).

#include "fft/callbacks/callback_source.hpp"

#include <fmt/format.h>

namespace cuplan::detail {

std::string callback_entry_symbol(CallbackRole role) {
  return role == CallbackRole::prolog ? "cuplan_fft_prolog_entry" : "cuplan_fft_epilog_entry";
}

// The source as NVRTC compiles it: the user's text, then a check of the symbol's type and cuplan's entry point at
// global scope with C++ linkage. cuFFT declares the callback itself, as a C++ function of the callback type's exact
// signature named by the symbol, and links that declaration's mangled name: an extern "C" or namespaced function
// never resolves (the plan fails with CUFFT_INTERNAL_ERROR).
std::string checked_callback_source(const std::string& source, const std::string& symbol, CallbackRole role,
                                    DType element, const std::string& name) {
  const char* t = device_element_type(element);
  const std::string pointer = role == CallbackRole::prolog
                                  ? fmt::format("{} (*)(void*, unsigned long long, void*, void*)", t)
                                  : fmt::format("void (*)(void*, unsigned long long, {}, void*, void*)", t);
  const std::string call = role == CallbackRole::prolog ? fmt::format("return {}(d, o, i, s);", symbol)
                                                        : fmt::format("{}(d, o, e, i, s);", symbol);
  const std::string params = role == CallbackRole::prolog
                                 ? "void* d, unsigned long long o, void* i, void* s"
                                 : fmt::format("void* d, unsigned long long o, {} e, void* i, void* s", t);
  return fmt::format(
      "{}\n#line 1 \"cuplan-callback-check\"\n"
      "#ifndef CUPLAN_CALLBACK_CHECK\n"  // once per program: the fused kernel's holds both callbacks
      "#define CUPLAN_CALLBACK_CHECK\n"
      "namespace cuplan_callback_check {{\n"
      "template <class A, class B> struct same {{ static constexpr bool value = false; }};\n"
      "template <class A> struct same<A, A> {{ static constexpr bool value = true; }};\n"
      "}}\n"
      "#endif\n"
      "static_assert(cuplan_callback_check::same<decltype(&{}), {}>::value,\n"
      "  \"cuplan: {} must be declared as: {} ({})\");\n"
      "__device__ {} {}({}) {{ {} }}\n",
      source, symbol, pointer, name, callback_signature(role, element, symbol), cufft_callback_type_name(role, element),
      role == CallbackRole::prolog ? t : "void", callback_entry_symbol(role), params, call);
}

}  // namespace cuplan::detail
