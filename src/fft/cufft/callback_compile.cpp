// SPDX-License-Identifier: Apache-2.0
#include "fft/cufft/callback_compile.hpp"

#include <nvJitLink.h>
#include <nvrtc.h>

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <mutex>
#include <tuple>

#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "fft/callbacks/callback_stats.hpp"
#include "fft/callbacks/nvrtc_program.hpp"

namespace cuplan::detail {
namespace {

// What makes two compilations the same: the code's identity, what it is checked against, the architecture and
// the options (fixed in this file, so the version of this scheme stands for them).
using CacheKey = std::tuple<std::uint64_t, std::uint64_t, int, int, int, int>;
constexpr int kOptionsVersion = 1;

struct Cache {
  std::mutex mutex;
  std::map<CacheKey, std::shared_ptr<const LtoCallback>> entries;
};
Cache& cache() {
  static Cache* instance = new Cache;  // never destroyed: plans may outlive static destruction order
  return *instance;
}

[[noreturn]] void fail(const std::string& name, const std::string& what, const std::string& log) {
  throw CallbackError(fmt::format("FFT: {}: {}{}{}", name, what, log.empty() ? "" : "; log:\n", log), name, log);
}

void check_nvrtc(nvrtcResult status, const char* call, const std::string& name) {
  if (status != NVRTC_SUCCESS)
    fail(name, fmt::format("{} failed with {} ({})", call, nvrtcGetErrorString(status), static_cast<int>(status)), "");
}

// NVRTC to LTO-IR for `sm`; the log goes into the error when compilation fails.
std::vector<char> compile(const std::string& text, int sm, const std::string& name, const char* file) {
  NvrtcProgram program;
  const char* header_text = callback_device_header_text();
  const char* header_name = "cuplan/fft_callback_device.hpp";
  check_nvrtc(nvrtcCreateProgram(&program.handle, text.c_str(), file, 1, &header_text, &header_name),
              "nvrtcCreateProgram", name);
  const std::string arch = fmt::format("-arch=sm_{}", sm);
  const char* options[] = {arch.c_str(), "-dlto", "-rdc=true", "-std=c++17"};
  const nvrtcResult status = nvrtcCompileProgram(program.handle, 4, options);
  if (status != NVRTC_SUCCESS)
    fail(name, fmt::format("NVRTC could not compile the source for sm_{} ({})", sm, nvrtcGetErrorString(status)),
         nvrtc_program_log(program.handle));
  std::size_t size = 0;
  check_nvrtc(nvrtcGetLTOIRSize(program.handle, &size), "nvrtcGetLTOIRSize", name);
  std::vector<char> lto(size);
  check_nvrtc(nvrtcGetLTOIR(program.handle, lto.data()), "nvrtcGetLTOIR", name);
  return lto;
}

struct Linker {
  nvJitLinkHandle handle = nullptr;
  ~Linker() {
    if (handle != nullptr) (void)nvJitLinkDestroy(&handle);
  }
};

std::string linker_log(nvJitLinkHandle handle) {
  std::size_t size = 0;
  if (nvJitLinkGetErrorLogSize(handle, &size) != NVJITLINK_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvJitLinkGetErrorLog(handle, log.data()) != NVJITLINK_SUCCESS) return {};
  log.resize(size - 1);
  return log;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Links the user's LTO-IR with a probe kernel that calls `symbol` through the role's declaration, as cuFFT does:
// nvJitLink then reports a missing symbol (an extern "C" one among them), other parameter types (they are part of
// the C++ name), LTO-IR of a newer compiler or an architecture it cannot target, with its log.
void probe_link(const std::vector<char>& user, const std::string& symbol, CallbackRole role, DType element, int sm,
                const std::string& name) {
  if (!is_identifier(symbol))
    fail(name,
         fmt::format("the symbol of LTO-IR must be the plain name of a __device__ function at global namespace scope "
                     "with C++ linkage (cuFFT declares the callback by that name; no namespace, no extern \"C\"), "
                     "got '{}'",
                     symbol),
         "");
  const char* t = device_element_type(element);
  const std::string probe =
      role == CallbackRole::prolog
          ? fmt::format(
                "__device__ {0} {1}(void*, unsigned long long, void*, void*);\n"
                "extern \"C\" __global__ void cuplan_probe(void* d, void* i) {{ (({0}*)d)[1] = {1}(d, 0, i, "
                "0); }}\n",
                t, symbol)
          : fmt::format(
                "__device__ void {1}(void*, unsigned long long, {0}, void*, void*);\n"
                "extern \"C\" __global__ void cuplan_probe(void* d, void* i) {{ {1}(d, 0, (({0}*)d)[1], i, "
                "0); }}\n",
                t, symbol);
  const std::vector<char> probe_lto = compile(probe, sm, name, "cuplan-callback-probe.cu");
  Linker linker;
  const std::string arch = fmt::format("-arch=sm_{}", sm);
  const char* options[] = {"-lto", arch.c_str()};
  const auto check = [&](nvJitLinkResult status, const char* call) {
    if (status != NVJITLINK_SUCCESS)
      fail(name,
           fmt::format("nvJitLink could not link the LTO-IR for sm_{} with a call to {} ({} returned {}); cuFFT calls "
                       "the callback through that C++ declaration, so the function must have exactly this signature, "
                       "at global namespace scope and without extern \"C\"",
                       sm, callback_signature(role, element, symbol), call, static_cast<int>(status)),
           linker.handle != nullptr ? linker_log(linker.handle) : std::string());
  };
  check(nvJitLinkCreate(&linker.handle, 2, options), "nvJitLinkCreate");
  // Raw LTO-IR or a fatbin holding it (nvcc -fatbin -dlto), as cuFFT takes both: let nvJitLink tell them apart.
  check(nvJitLinkAddData(linker.handle, NVJITLINK_INPUT_ANY, user.data(), user.size(), "callback"), "nvJitLinkAddData");
  check(nvJitLinkAddData(linker.handle, NVJITLINK_INPUT_LTOIR, probe_lto.data(), probe_lto.size(), "probe"),
        "nvJitLinkAddData");
  check(nvJitLinkComplete(linker.handle), "nvJitLinkComplete");
}

}  // namespace

std::shared_ptr<const LtoCallback> lto_callback(const FFTCallback& callback, CallbackRole role, DType element, int sm) {
  const std::string name = callback_name(role, callback);
  const bool source = callback.form() == FFTCallback::Form::cuda_source;
  if (!source && callback.form() != FFTCallback::Form::lto_ir)
    fail(name,
         "CUDA execution runs CUDA source or LTO-IR callbacks; a host callable runs on the CPU only "
         "(Execution::cpu())",
         "");
  const FFTCallback::Code& code = *callback.code();
  const CacheKey key{code.hash[0], code.hash[1],   static_cast<int>(role), static_cast<int>(element.code()),
                     sm,           kOptionsVersion};
  Cache& c = cache();
  // Held while compiling: a second plan of the same source waits for the first compilation instead of repeating it.
  const std::lock_guard lock(c.mutex);
  if (const auto it = c.entries.find(key); it != c.entries.end()) {
    if (source) record_callback_cache_hit();
    return it->second;
  }
  auto entry = std::make_shared<LtoCallback>();
  if (source) {
    const auto started = std::chrono::steady_clock::now();
    entry->lto_ir =
        compile(checked_callback_source(code.source, code.symbol, role, element, name), sm, name, "cuplan-callback.cu");
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    record_callback_compilation(ms);
    entry->symbol = callback_entry_symbol(role);
    log(LogLevel::info, "FFT: compiled {} for sm_{} with NVRTC in {:.1f} ms ({} bytes of LTO-IR)", name, sm, ms,
        entry->lto_ir.size());
  } else {
    entry->lto_ir.assign(code.lto.begin(), code.lto.end());
    probe_link(entry->lto_ir, code.symbol, role, element, sm, name);
    entry->symbol = code.symbol;
  }
  c.entries.emplace(key, entry);
  return entry;
}

}  // namespace cuplan::detail
