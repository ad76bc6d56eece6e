// SPDX-License-Identifier: Apache-2.0
// The fused FFT kernels' NVRTC compilation and the two caches (see fused_fft_kernel.hpp; their source:
// fused_fft_source.cpp). Host code only: everything here runs without a GPU.
//
// NVRTC on the cuFFTDx headers, not libmathdx + nvJitLink: the headers are what the build already requires for the
// ahead-of-time convolution kernels, NVRTC ships with every CUDA toolkit, and one NVRTC program holds the user's
// callbacks and the FFT together, so the compiler inlines the callbacks into the loads and stores (with libmathdx
// the FFT comes as LTO-IR that nvJitLink links to the user's code, one more library to install and a link step
// per plan). Callbacks the user gives as LTO-IR cannot be inlined from source: the kernel then declares them, NVRTC
// compiles it to LTO-IR and nvJitLink links both into the cubin, optimizing across them (the same inlining, done
// at link time). NVRTC's precompiled headers live in the compiling process only and make its first compilation slower
// (they are created then): CUPLAN_NVRTC_PCH=1 turns them on for processes that compile many programs; the on-disk
// cache is what makes a second plan cheap, in any process.

#include <nvrtc.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "base/hash128.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "fft/callbacks/callback_source.hpp"
#include "fft/callbacks/callback_stats.hpp"
#include "fft/callbacks/callback_types.hpp"
#include "fft/callbacks/nvjitlink_linker.hpp"
#include "fft/callbacks/nvrtc_program.hpp"
#include "fft/fused_kernels/fused_fft_kernel.hpp"
#include "fft/fused_kernels/fused_fft_paths.hpp"

namespace cuplan::detail::fused_fft {
namespace {

namespace fs = std::filesystem;

// Bumped whenever the generated source's meaning or the cache file format changes.
constexpr const char* kFormat = "cuplan-fused-fft-2";

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ';');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// The cuFFTDx and CUTLASS include folders: under CUPLAN_MATHDX_ROOT when set (the folder holding include/cufftdx.hpp
// or a site-packages folder holding nvidia/mathdx), else the build's.
std::vector<std::string> mathdx_dirs() {
  const char* variable = std::getenv("CUPLAN_MATHDX_ROOT");
  const std::string root = variable != nullptr ? variable : "";
  if (root.empty()) return split(build_mathdx_include_dirs());
  for (const fs::path& base : {fs::path(root), fs::path(root) / "nvidia" / "mathdx"})
    if (fs::exists(base / "include" / "cufftdx.hpp"))
      return {(base / "include").string(), (base / "external" / "cutlass" / "include").string()};
  return {(fs::path(root) / "include").string()};
}

std::vector<std::string> cuda_dirs() {
  for (const char* name : {"CUDA_HOME", "CUDA_PATH"}) {
    const std::string root = env(name);
    if (root.empty() || !fs::exists(fs::path(root) / "include" / "cuda_fp16.h")) continue;
    std::vector<std::string> dirs{(fs::path(root) / "include").string()};
    if (fs::exists(fs::path(root) / "include" / "cccl")) dirs.push_back((fs::path(root) / "include" / "cccl").string());
    return dirs;
  }
  return split(build_cuda_include_dirs());
}

// With LTO-IR callbacks the program is compiled to LTO-IR (-dlto) with relocatable device code, so that the
// callbacks it declares are resolved by nvJitLink.
std::vector<std::string> nvrtc_options(int sm, bool lto) {
  std::vector<std::string> options{fmt::format("-arch=sm_{}", sm), "-std=c++17", "-default-device"};
  if (lto) options.insert(options.end(), {"-dlto", "-rdc=true"});
  for (const std::string& dir : mathdx_dirs()) options.push_back("-I" + dir);
  for (const std::string& dir : cuda_dirs()) options.push_back("-I" + dir);
  return options;
}

std::string callbacks_name(const KernelSpec& s) {
  std::string names;
  for (const auto* c : {s.prolog.get(), s.epilog.get()})
    if (c != nullptr) names += (names.empty() ? "" : " and ") + c->name;
  return names.empty() ? std::string("fused FFT kernel") : names;
}

[[noreturn]] void fail(const KernelSpec& s, const std::string& what, const std::string& log) {
  const std::string name = callbacks_name(s);
  throw CallbackError(fmt::format("FFT: {}: {}{}{}", name, what, log.empty() ? "" : "; log:\n", log), name, log);
}

void check_nvrtc(const KernelSpec& s, nvrtcResult status, const char* call) {
  if (status != NVRTC_SUCCESS)
    fail(s, fmt::format("{} failed with {} ({})", call, nvrtcGetErrorString(status), static_cast<int>(status)), "");
}

bool use_pch() {
  const char* value = std::getenv("CUPLAN_NVRTC_PCH");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

std::vector<char> nvrtc_compile(const KernelSpec& s, const std::string& source,
                                const std::vector<std::string>& options) {
  if (use_pch()) {
    // NVRTC's precompiled header of cufftdx.hpp needs a heap of about 750 MiB; set once per process.
    static const nvrtcResult heap = nvrtcSetPCHHeapSize(std::size_t{1} << 30);
    check_nvrtc(s, heap, "nvrtcSetPCHHeapSize");
  }
  NvrtcProgram program;
  const char* header_text = callback_device_header_text();
  const char* header_name = "cuplan/fft_callback_device.hpp";
  check_nvrtc(s,
              nvrtcCreateProgram(&program.handle, source.c_str(), "cuplan-fused-fft.cu", 1, &header_text, &header_name),
              "nvrtcCreateProgram");
  std::vector<const char*> raw;
  for (const std::string& o : options) raw.push_back(o.c_str());
  if (use_pch()) raw.push_back("-pch");
  const nvrtcResult status = nvrtcCompileProgram(program.handle, static_cast<int>(raw.size()), raw.data());
  if (status != NVRTC_SUCCESS)
    fail(s,
         fmt::format("NVRTC could not compile the fused FFT kernel ({} {} of length {} for sm_{}) with the callbacks "
                     "inlined ({})",
                     to_string(s.type), s.precision.name(), s.length, s.sm, nvrtcGetErrorString(status)),
         nvrtc_program_log(program.handle));
  std::size_t size = 0;
  std::vector<char> code;
  if (s.links_lto()) {
    check_nvrtc(s, nvrtcGetLTOIRSize(program.handle, &size), "nvrtcGetLTOIRSize");
    code.resize(size);
    check_nvrtc(s, nvrtcGetLTOIR(program.handle, code.data()), "nvrtcGetLTOIR");
  } else {
    check_nvrtc(s, nvrtcGetCUBINSize(program.handle, &size), "nvrtcGetCUBINSize");
    code.resize(size);
    check_nvrtc(s, nvrtcGetCUBIN(program.handle, code.data()), "nvrtcGetCUBIN");
  }
  return code;
}

std::vector<std::string> nvjitlink_options(int sm) {
  return {fmt::format("-arch=sm_{}", sm), "-lto"};
}

std::string nvjitlink_version() {
  unsigned major = 0, minor = 0;
  if (nvJitLinkVersion(&major, &minor) != NVJITLINK_SUCCESS) return "nvJitLink unknown";
  return fmt::format("nvJitLink {}.{}", major, minor);
}

// The LTO-IR callbacks of `s` (prolog first).
std::vector<const InlinedCallback*> lto_callbacks(const KernelSpec& s) {
  std::vector<const InlinedCallback*> list;
  for (const auto* c : {s.prolog.get(), s.epilog.get()})
    if (c != nullptr && c->is_lto()) list.push_back(c);
  return list;
}

// The program with LTO-IR callbacks: the user's LTO-IR is handed to nvJitLink first, so that bytes it does not take
// fail at once, naming their callback, before the kernel's compilation; then the kernel, compiled by NVRTC to
// LTO-IR, and the link into a cubin for s.sm. Every nvJitLink status is checked, with the linker's log in the error.
std::vector<char> compile_and_link(const KernelSpec& s, const std::string& source,
                                   const std::vector<std::string>& options) {
  NvJitLinker linker;
  const std::vector<std::string> link_options = nvjitlink_options(s.sm);
  std::vector<const char*> raw;
  for (const std::string& o : link_options) raw.push_back(o.c_str());
  const auto check = [&](nvJitLinkResult status, const char* call, const std::string& name, const std::string& what) {
    if (status != NVJITLINK_SUCCESS) {
      const std::string log = nvjitlink_error_log(linker.handle);
      throw CallbackError(fmt::format("FFT: {}: {} ({} returned {}){}{}", name, what, call, static_cast<int>(status),
                                      log.empty() ? "" : "; log:\n", log),
                          name, log);
    }
  };
  const std::string all = callbacks_name(s);
  check(nvJitLinkCreate(&linker.handle, static_cast<std::uint32_t>(raw.size()), raw.data()), "nvJitLinkCreate", all,
        fmt::format("nvJitLink could not start a link for sm_{}", s.sm));
  for (const InlinedCallback* c : lto_callbacks(s))
    // Raw LTO-IR or a fatbin holding it (nvcc -fatbin -dlto), as on the cuFFT route: nvJitLink tells them apart.
    check(nvJitLinkAddData(linker.handle, NVJITLINK_INPUT_ANY, c->lto_ir.data(), c->lto_ir.size(), c->name.c_str()),
          "nvJitLinkAddData", c->name,
          fmt::format("nvJitLink does not take the {} bytes given as LTO-IR for sm_{} (LTO-IR of `nvcc -dlto` or "
                      "NVRTC's -dlto, or a fatbin holding it, from a CUDA toolkit no newer than this nvJitLink)",
                      c->lto_ir.size(), s.sm));
  const std::vector<char> kernel = nvrtc_compile(s, source, options);
  check(nvJitLinkAddData(linker.handle, NVJITLINK_INPUT_LTOIR, kernel.data(), kernel.size(), "cuplan-fused-fft"),
        "nvJitLinkAddData", all, "nvJitLink does not take the fused kernel's LTO-IR");
  std::string declarations;
  for (const InlinedCallback* c : lto_callbacks(s))
    declarations += fmt::format(
        "{}{}", declarations.empty() ? "" : "; ",
        callback_signature(c == s.prolog.get() ? CallbackRole::prolog : CallbackRole::epilog, c->element, c->symbol));
  check(nvJitLinkComplete(linker.handle), "nvJitLinkComplete", all,
        fmt::format("nvJitLink could not link the fused kernel ({} {} of length {}) with the LTO-IR for sm_{}; the "
                    "kernel calls {} at global namespace scope with C++ linkage (not extern \"C\")",
                    to_string(s.type), s.precision.name(), s.length, s.sm, declarations));
  std::size_t size = 0;
  check(nvJitLinkGetLinkedCubinSize(linker.handle, &size), "nvJitLinkGetLinkedCubinSize", all,
        "nvJitLink gave no cubin");
  std::vector<char> cubin(size);
  check(nvJitLinkGetLinkedCubin(linker.handle, cubin.data()), "nvJitLinkGetLinkedCubin", all,
        "nvJitLink gave no cubin");
  return cubin;
}

// On-disk entries: a header line naming the format and the key, the size, then the cubin. A file whose header or
// size does not match (another format, a truncated or foreign file) is ignored and replaced.
std::string file_header(const std::string& key) {
  return fmt::format("{} {}\n", kFormat, key);
}

std::optional<std::vector<char>> read_entry(const fs::path& file, const std::string& key) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string header;
  if (!std::getline(in, header) || header + "\n" != file_header(key)) return std::nullopt;
  std::uint64_t size = 0;
  if (!in.read(reinterpret_cast<char*>(&size), sizeof size) || size == 0 || size > (std::uint64_t{1} << 32))
    return std::nullopt;
  std::vector<char> cubin(size);
  if (!in.read(cubin.data(), static_cast<std::streamsize>(size)) || in.peek() != std::char_traits<char>::eof())
    return std::nullopt;
  return cubin;
}

// Written to a temporary file of a unique name in the same folder, then renamed over the entry: a rename within one
// file system is atomic, so a concurrent reader sees the old entry, no entry or the whole new one. Failures are
// logged (the cache is an optimization).
void write_entry(const fs::path& dir, const fs::path& file, const std::string& key, const std::vector<char>& cubin) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    log(LogLevel::warning, "FFT: kernel cache: cannot create {}: {}", dir.string(), error.message());
    return;
  }
  std::random_device random;
  const fs::path temporary = dir / fmt::format(".{}.{:08x}{:08x}.tmp", file.filename().string(), random(), random());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::string header = file_header(key);
    const std::uint64_t size = cubin.size();
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(&size), sizeof size);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    out.close();
    if (!out) {
      log(LogLevel::warning, "FFT: kernel cache: cannot write {}", temporary.string());
      fs::remove(temporary, error);
      return;
    }
  }
  fs::rename(temporary, file, error);
  if (error) {
    log(LogLevel::warning, "FFT: kernel cache: cannot rename {} to {}: {}", temporary.string(), file.string(),
        error.message());
    fs::remove(temporary, error);
  }
}

struct ProcessCache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const CompiledKernel>> entries;
};
ProcessCache& process_cache() {
  static auto* instance = new ProcessCache;  // never destroyed: plans may outlive static destruction order
  return *instance;
}

}  // namespace

std::string headers_problem() {
  const std::vector<std::string> dirs = mathdx_dirs();
  if (dirs.empty()) return "this build found no MathDx (cuFFTDx headers) and CUPLAN_MATHDX_ROOT is not set";
  if (!fs::exists(fs::path(dirs.front()) / "cufftdx.hpp"))
    return fmt::format("the cuFFTDx headers are not at {} (set CUPLAN_MATHDX_ROOT to an installed MathDx)",
                       dirs.front());
  return {};
}

bool is_native_length(DType precision, std::int64_t length) {
  const std::vector<std::string> dirs = mathdx_dirs();
  if (dirs.empty()) return false;
  static std::mutex mutex;
  static std::map<std::string, std::set<std::pair<int, std::int64_t>>> by_folder;  // (bits, length)
  const std::lock_guard lock(mutex);
  auto [it, added] = by_folder.try_emplace(dirs.front());
  if (added) {
    std::error_code error;
    for (const auto& file : fs::directory_iterator(fs::path(dirs.front()) / "cufftdx" / "database", error)) {
      long long n = 0;
      int bits = 0;
      char tail[8] = {};
      if (std::sscanf(file.path().filename().string().c_str(), "fft_%lld_fp%d_fwd.hpp.in%1s", &n, &bits, tail) == 3)
        it->second.emplace(bits, n);
    }
  }
  return it->second.count({precision == f64 ? 64 : 32, length}) != 0;
}

std::string kernel_cache_directory() {
  if (const char* dir = std::getenv("CUPLAN_KERNEL_CACHE_DIR"); dir != nullptr) {
    const std::string value(dir);
    return value == "off" ? std::string() : value;
  }
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
    return (fs::path(xdg) / "cuplan" / "kernels").string();
  if (const std::string home = env("HOME"); !home.empty())
    return (fs::path(home) / ".cache" / "cuplan" / "kernels").string();
  return {};
}

void clear_process_cache_for_testing() {
  ProcessCache& cache = process_cache();
  const std::lock_guard lock(cache.mutex);
  cache.entries.clear();
}

namespace {

// What one compilation needs and the key its result is cached under.
struct Prepared {
  std::string source;
  std::vector<std::string> options;
  std::string key;
};

Prepared prepare(const KernelSpec& s) {
  for (const InlinedCallback* c : lto_callbacks(s))
    if (!is_plain_identifier(c->symbol))
      throw CallbackError(
          fmt::format("FFT: {}: the symbol of LTO-IR must be the plain name of a __device__ function at global "
                      "namespace scope with C++ linkage (the fused kernel, like cuFFT, declares the callback by that "
                      "name; no namespace, no extern \"C\"), got '{}'",
                      c->name, c->symbol),
          c->name, "");
  const bool lto = s.links_lto();
  const std::string source = kernel_source(s);
  const std::vector<std::string> options = nvrtc_options(s.sm, lto);
  int major = 0, minor = 0;
  check_nvrtc(s, nvrtcVersion(&major, &minor), "nvrtcVersion");
  Hash128 hash;
  hash.add(kFormat);
  hash.add(source);
  for (const std::string& o : options) hash.add(o);  // the architecture and the include folders (another MathDx)
  hash.add(build_mathdx_version());
  hash.add(fmt::format("nvrtc {}.{}", major, minor));
  if (lto) {
    for (const std::string& o : nvjitlink_options(s.sm)) hash.add(o);
    hash.add(nvjitlink_version());
    for (const InlinedCallback* c : lto_callbacks(s))
      hash.add(std::string_view(reinterpret_cast<const char*>(c->lto_ir.data()), c->lto_ir.size()));
  }
  Prepared p{source, options, {}};
  p.key = fmt::format("fft-{}-{}-{}{}{}-sm{}-{:016x}{:016x}", to_string(s.type), s.precision.name(), s.length,
                      folded_real_mode(s.type, s.precision, s.length) ? "-folded" : "", lto ? "-lto" : "", s.sm, hash.a,
                      hash.b);

  return p;
}

}  // namespace

std::string kernel_key(const KernelSpec& s) {
  return prepare(s).key;
}

std::shared_ptr<const CompiledKernel> compiled_kernel(const KernelSpec& s) {
  if (const std::string problem = headers_problem(); !problem.empty())
    throw NotSupported(
        fmt::format("FFT: the fused route compiles its kernel with NVRTC on the cuFFTDx headers, but {}", problem));
  const Prepared p = prepare(s);
  const bool lto = s.links_lto();
  const std::string& source = p.source;
  const std::vector<std::string>& options = p.options;
  auto entry = std::make_shared<CompiledKernel>();
  entry->key = p.key;
  entry->type = s.type;

  ProcessCache& cache = process_cache();
  // Held while compiling: a second plan of the same program waits for the first compilation instead of repeating it.
  const std::lock_guard lock(cache.mutex);
  if (const auto it = cache.entries.find(entry->key); it != cache.entries.end()) {
    record_callback_cache_hit();
    return it->second;
  }
  const std::string dir = kernel_cache_directory();
  const fs::path file = dir.empty() ? fs::path() : fs::path(dir) / (entry->key + ".cubin");
  if (!dir.empty()) {
    if (std::optional<std::vector<char>> cubin = read_entry(file, entry->key)) {
      entry->cubin = std::move(*cubin);
      record_callback_cache_hit();
      log(LogLevel::info, "FFT: fused kernel {} read from {}", entry->key, file.string());
      cache.entries.emplace(entry->key, entry);
      return entry;
    }
  }
  const auto started = std::chrono::steady_clock::now();
  entry->cubin = lto ? compile_and_link(s, source, options) : nvrtc_compile(s, source, options);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  record_callback_compilation(ms);
  log(LogLevel::info, "FFT: compiled fused kernel {} with NVRTC{} in {:.0f} ms ({} bytes of cubin)", entry->key,
      lto ? " and linked it with nvJitLink" : "", ms, entry->cubin.size());
  if (!dir.empty()) write_entry(dir, file, entry->key, entry->cubin);
  cache.entries.emplace(entry->key, entry);
  return entry;
}

}  // namespace cuplan::detail::fused_fft
