// SPDX-License-Identifier: Apache-2.0
// FFTCallback's factories and identity, and the process-wide counters of callback compilations.

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <string_view>

#include "base/hash128.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/fft_callbacks.hpp"
#include "fft/callbacks/callback_stats.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace {

using detail::Hash128;  // the identity plan caches compare callbacks by

std::atomic<std::uint64_t> g_next_host_id{1};

// The code of a GPU callback with its identity: a hash of the form, the source or bytes, and the symbol.
std::shared_ptr<FFTCallback::Code> hashed_code(std::string_view form, std::string_view payload, std::string symbol) {
  Hash128 hash;
  hash.add(form);
  hash.add(payload);
  hash.add(symbol);
  auto code = std::make_shared<FFTCallback::Code>();
  code->symbol = std::move(symbol);
  code->hash[0] = hash.a;
  code->hash[1] = hash.b;
  return code;
}

void check_symbol(const std::string& symbol, const char* factory) {
  if (symbol.empty())
    throw InvalidArgument(
        fmt::format("FFTCallback::{}: symbol: expected the name of the device function, got \"\"", factory));
}

}  // namespace

FFTCallback FFTCallback::cuda_source(std::string source, std::string symbol, void* user_data) {
  check_symbol(symbol, "cuda_source");
  if (source.empty()) throw InvalidArgument("FFTCallback::cuda_source: source: expected CUDA C++ code, got \"\"");
  auto code = hashed_code("cuda_source", source, std::move(symbol));
  code->source = std::move(source);
  return with_code(Form::cuda_source, std::move(code), user_data);
}

FFTCallback FFTCallback::lto_ir(std::vector<unsigned char> bytes, std::string symbol, void* user_data) {
  check_symbol(symbol, "lto_ir");
  if (bytes.empty()) throw InvalidArgument("FFTCallback::lto_ir: bytes: expected LTO-IR (nvcc -dlto), got 0 bytes");
  auto code = hashed_code("lto_ir", std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                          std::move(symbol));
  code->lto = std::move(bytes);
  return with_code(Form::lto_ir, std::move(code), user_data);
}

FFTCallback FFTCallback::with_code(Form form, std::shared_ptr<const Code> code, void* user_data) {
  FFTCallback callback;
  callback.form_ = form;
  callback.code_ = std::move(code);
  callback.user_data_ = user_data;
  return callback;
}

FFTCallback FFTCallback::lto_ir(const void* bytes, std::size_t size, std::string symbol, void* user_data) {
  if (bytes == nullptr && size > 0) throw InvalidArgument("FFTCallback::lto_ir: bytes: null pointer with a size");
  const auto* begin = static_cast<const unsigned char*>(bytes);
  return lto_ir(std::vector<unsigned char>(begin, begin + size), std::move(symbol), user_data);
}

FFTCallback FFTCallback::make_host(HostFunction function, HostRun run, void* user_data) {
  const bool empty = std::visit(
      [](const auto& f) {
        if constexpr (std::is_same_v<std::decay_t<decltype(f)>, std::monostate>)
          return true;
        else
          return !static_cast<bool>(f);
      },
      function);
  if (empty) throw InvalidArgument("FFTCallback::host_prolog/host_epilog: function: expected a callable, got none");
  FFTCallback callback;
  callback.form_ = Form::host;
  callback.host_ = std::make_shared<const HostFunction>(std::move(function));
  callback.host_run_ = std::move(run);
  callback.host_id_ = g_next_host_id.fetch_add(1, std::memory_order_relaxed);
  callback.user_data_ = user_data;
  return callback;
}

const std::string& FFTCallback::symbol() const noexcept {
  static const std::string none;
  return code_ ? code_->symbol : none;
}

std::uint64_t FFTCallback::identity(int word) const noexcept {
  if (code_) return code_->hash[word == 0 ? 0 : 1];
  return word == 0 ? host_id_ : 0;
}

FFTCallbackStats fft_callback_stats() noexcept {
  return detail::callback_stats();
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan

namespace cuplan::detail {
namespace {

std::mutex& stats_mutex() {
  static std::mutex mutex;
  return mutex;
}
FFTCallbackStats g_stats;

}  // namespace

FFTCallbackStats callback_stats() noexcept {
  const std::lock_guard lock(stats_mutex());
  return g_stats;
}

void record_callback_compilation(double milliseconds) noexcept {
  const std::lock_guard lock(stats_mutex());
  ++g_stats.compilations;
  g_stats.compile_ms += milliseconds;
  g_stats.last_compile_ms = milliseconds;
}

void record_callback_cache_hit() noexcept {
  const std::lock_guard lock(stats_mutex());
  ++g_stats.cache_hits;
}

}  // namespace cuplan::detail
