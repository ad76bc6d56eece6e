// SPDX-License-Identifier: Apache-2.0
// StreamGate (see stream_gate.hpp): the stream memory operations come from the driver through the runtime's
// entry-point query, so that the library does not link the driver library itself.

#include "runtime/stream_gate.hpp"

#include <cuda.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

using StreamValueOp = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

struct MemoryOps {
  StreamValueOp wait = nullptr;
  StreamValueOp write = nullptr;

  MemoryOps() {
    wait = load("cuStreamWaitValue32");
    write = load("cuStreamWriteValue32");
  }
  static StreamValueOp load(const char* symbol) {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(symbol, &function, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();  // not sticky; leave no error behind for the caller's next check
      return nullptr;
    }
    return reinterpret_cast<StreamValueOp>(function);
  }
};

const MemoryOps& memory_ops() {
  static const MemoryOps ops;
  return ops;
}

void check_driver(CUresult status, const char* call) {
  if (status != CUDA_SUCCESS) [[unlikely]]
    throw CudaError("CUDA driver", call, static_cast<int>(status), "CUresult",
                    fmt::format("CUDA driver call failed: {} returned CUresult {}", call, static_cast<int>(status)));
}

std::uint32_t load_word(std::uint32_t* word) noexcept {
  return std::atomic_ref<std::uint32_t>(*word).load(std::memory_order_acquire);
}

// The gate words: pinned, mapped host memory in slabs that live as long as the process (a stream may still wait on
// a word while the process ends), each word with the generation its last closing used.
class GateWords {
 public:
  struct Taken {
    std::uint32_t* word;
    std::uint32_t generation;
  };
  Taken take() {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < idle_.size(); ++i) {
      Idle& idle = idle_[i];
      // Reusable once its last opening has landed (a cyclic comparison, as the driver's wait makes it).
      if (static_cast<std::int32_t>(load_word(idle.word) - idle.generation) >= 0) {
        const Taken taken{idle.word, idle.generation + 1};
        idle_[i] = idle_.back();
        idle_.pop_back();
        return taken;
      }
    }
    if (next_ == slab_words) {
      void* slab = nullptr;
      CUPLAN_CUDA_CHECK(
          cudaHostAlloc(&slab, slab_words * sizeof(std::uint32_t), cudaHostAllocPortable | cudaHostAllocMapped));
      slab_ = static_cast<std::uint32_t*>(slab);
      for (std::size_t i = 0; i < slab_words; ++i) slab_[i] = 0;
      next_ = 0;
    }
    return {slab_ + next_++, 1};
  }
  void give_back(std::uint32_t* word, std::uint32_t generation) {
    const std::lock_guard lock(mutex_);
    idle_.push_back({word, generation});
  }

 private:
  static constexpr std::size_t slab_words = 1024;
  struct Idle {
    std::uint32_t* word;
    std::uint32_t generation;
  };
  std::mutex mutex_;
  std::uint32_t* slab_ = nullptr;
  std::size_t next_ = slab_words;
  std::vector<Idle> idle_;
};

GateWords& gate_words() {
  static GateWords* words = new GateWords;  // never destroyed: see GateWords
  return *words;
}

CUdeviceptr device_address(std::uint32_t* word) {
  // Mapped, portable pinned memory under unified addressing: the host address is the device address on every device.
  return reinterpret_cast<CUdeviceptr>(word);
}

}  // namespace

bool StreamGate::available() noexcept {
  try {
    const MemoryOps& ops = memory_ops();
    return ops.wait != nullptr && ops.write != nullptr;
  } catch (...) {
    return false;
  }
}

StreamGate::StreamGate(StreamRef stream) {
  const MemoryOps& ops = memory_ops();
  if (ops.wait == nullptr || ops.write == nullptr)
    throw NotSupported("stream gate: the CUDA driver offers no cuStreamWaitValue32 / cuStreamWriteValue32");
  const GateWords::Taken taken = gate_words().take();
  try {
    check_driver(ops.wait(reinterpret_cast<CUstream>(stream.native()), device_address(taken.word), taken.generation,
                          CU_STREAM_WAIT_VALUE_GEQ),
                 "cuStreamWaitValue32");
  } catch (...) {
    gate_words().give_back(taken.word, taken.generation - 1);  // nothing waits: the last generation stands
    throw;
  }
  word_ = taken.word;
  generation_ = taken.generation;
}

StreamGate::StreamGate(StreamGate&& other) noexcept
    : word_(std::exchange(other.word_, nullptr)), generation_(other.generation_), opened_(other.opened()) {}

StreamGate::~StreamGate() {
  if (word_ == nullptr) return;
  if (!opened()) open_now();
  gate_words().give_back(word_, generation_);
}

void StreamGate::open_on(StreamRef stream) {
  if (opened()) return;
  check_driver(memory_ops().write(reinterpret_cast<CUstream>(stream.native()), device_address(word_), generation_,
                                  CU_STREAM_WRITE_VALUE_DEFAULT),
               "cuStreamWriteValue32");
  opened_.store(true, std::memory_order_release);
}

void StreamGate::open_now() noexcept {
  std::atomic_ref<std::uint32_t>(*word_).store(generation_, std::memory_order_seq_cst);
  opened_.store(true, std::memory_order_release);
}

}  // namespace cuplan::detail
