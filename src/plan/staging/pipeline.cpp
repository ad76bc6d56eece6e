// SPDX-License-Identifier: Apache-2.0
#include "plan/staging/pipeline.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/cuda_check.hpp"
#include "base/geometry.hpp"
#include "base/nvtx.hpp"
#include "plan/staging/chunking.hpp"
#include "plan/staging/host_copy_pool.hpp"

namespace cuplan::detail::staging {

namespace {

std::size_t part_bytes(const HostPart& part) noexcept {
  return static_cast<std::size_t>(part.host.numel()) * part.host.dtype().size();
}

// Pinned memory laid out as on the device: the DMA reads or writes it in place, no host copy.
bool direct(const HostPart& part) noexcept {
  if (part.host.memory_space() != MemorySpace::host_pinned) return false;
  return is_single_block(reduce_copy(part.host.shape(), part.host.strides(), part.device_strides));
}

// A part's host copy and its split into blocks, each one contiguous range of the pinned slot (the DMA's side):
// packing splits the copy's destination, unpacking its source.
struct PartCopy {
  CopyGeometry geometry;
  std::size_t element_size = 0;
  std::size_t bytes = 0;       // of the whole part
  std::size_t pinned_row = 0;  // pinned bytes of one index of the split axis (geometry's axis 0)
  int blocks = 1;

  /// Pinned bytes [first, first + second) of block b.
  std::pair<std::size_t, std::size_t> range(int b) const noexcept {
    if (blocks == 1) return {0, bytes};
    const auto [first, last] = block_rows(geometry, blocks, b);
    return {static_cast<std::size_t>(first) * pinned_row, static_cast<std::size_t>(last - first) * pinned_row};
  }
};

PartCopy part_copy(const HostPart& part, bool unpacking) noexcept {
  PartCopy c;
  c.element_size = part.host.dtype().size();
  c.bytes = part_bytes(part);
  c.geometry = unpacking ? reduce_copy(part.host.shape(), part.device_strides, part.host.strides())
                         : reduce_copy(part.host.shape(), part.host.strides(), part.device_strides);
  c.blocks = contiguous_blocks(c.geometry, c.element_size, unpacking, copy_block_bytes, max_copy_blocks);
  if (c.geometry.rank > 0)
    c.pinned_row =
        static_cast<std::size_t>(unpacking ? c.geometry.src_strides[0] : c.geometry.dst_strides[0]) * c.element_size;
  return c;
}

void unpack(const void* pinned, const HostPart& part) noexcept {
  NvtxRange range("cuplan::staging::unpack");
  const PartCopy c = part_copy(part, true);
  parallel_copy_strided(c.geometry, pinned, part.host.data(), c.element_size);
}

void* offset(void* base, std::size_t bytes, int slot) noexcept {
  return base == nullptr ? nullptr : static_cast<std::byte*>(base) + static_cast<std::size_t>(slot) * bytes;
}

void* at(void* base, std::size_t bytes) noexcept {
  return static_cast<std::byte*>(base) + bytes;
}

// Every input part of a chunk: `in` first, then `more_in`.
template <class F>
void for_each_input(const ChunkParts& p, F&& f) {
  if (p.in) f(*p.in);
  for (const HostPart& part : p.more_in) f(part);
}

bool has_input(const ChunkParts& p) noexcept {
  return p.in.has_value() || !p.more_in.empty();
}

bool packs_input(const ChunkParts& p) noexcept {
  bool packs = false;
  for_each_input(p, [&](const HostPart& part) { packs = packs || !direct(part); });
  return packs;
}

// One step of a spin-wait: tells the CPU (or the scheduler) that this thread is waiting.
void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

// The first CUDA error of callbacks that run on the copy pool's threads, where nothing may throw.
class FirstError {
 public:
  void note(cudaError_t status) noexcept {
    int expected = cudaSuccess;
    if (status != cudaSuccess) (void)first_.compare_exchange_strong(expected, static_cast<int>(status));
  }
  cudaError_t get() const noexcept { return static_cast<cudaError_t>(first_.load()); }

 private:
  std::atomic<int> first_{cudaSuccess};
};

// Waits for the download of each block of one chunk's result on behalf of every copy thread. Only the first thread
// that needs a block synchronises with its event; the others spin on a flag until it is done. When every thread of
// the pool called cudaEventSynchronize on the same event, those calls contended in the driver and the unpack into
// pageable memory ran at about half the DMA rate (docs/staging.md).
class BlockArrivals {
 public:
  BlockArrivals() noexcept {
    for (std::atomic<int>& s : state_) s.store(waiting, std::memory_order_relaxed);
  }
  void wait(int block, cudaEvent_t downloaded, FirstError& error) noexcept {
    std::atomic<int>& s = state_[static_cast<std::size_t>(block)];
    int expected = waiting;
    if (s.load(std::memory_order_acquire) == arrived) return;
    if (s.compare_exchange_strong(expected, synchronising, std::memory_order_acq_rel)) {
      error.note(cudaEventSynchronize(downloaded));
      s.store(arrived, std::memory_order_release);  // also on an error: the others must not spin forever
      return;
    }
    while (s.load(std::memory_order_acquire) != arrived) cpu_relax();
  }

 private:
  static constexpr int waiting = 0, synchronising = 1, arrived = 2;
  std::array<std::atomic<int>, max_copy_blocks> state_;
};

// Packs and uploads the inputs of one chunk on `stream`: a pinned part is one DMA from the operand itself; a
// pageable part is packed into the pinned slot block by block, each block uploaded as soon as it is packed. The
// last pageable part is packed on the copy pool's threads from the constructor on, so that the caller can enqueue
// the previous chunk's compute and download meanwhile (those CUDA calls would otherwise leave the threads idle
// once per chunk); finish() joins it. Earlier pageable parts are packed before the constructor returns.
class ChunkUpload {
 public:
  ChunkUpload(const ChunkParts& p, void* device, void* pinned, cudaStream_t stream) : stream_(stream) {
    const HostPart* last = nullptr;
    for_each_input(p, [&](const HostPart& part) {
      if (!direct(part)) last = &part;
    });
    for_each_input(p, [&](const HostPart& part) {
      void* dst = at(device, part.device_offset);
      if (direct(part)) {
        error_.note(cudaMemcpyAsync(dst, part.host.data(), part_bytes(part), cudaMemcpyHostToDevice, stream));
        return;
      }
      NvtxRange range("cuplan::staging::pack");
      const PartCopy c = part_copy(part, false);
      void* src = at(pinned, part.device_offset);
      if (&part == last) {
        last_ = c;
        last_src_ = src;
        last_dst_ = dst;
        copy_.emplace(c.geometry, part.host.data(), src, c.element_size, c.blocks, std::function<void(int)>{},
                      [this](int b) { upload_block(b); });
        return;
      }
      parallel_copy_blocks(c.geometry, part.host.data(), src, c.element_size, c.blocks, {}, [&](int b) {
        const auto [first, bytes] = c.range(b);
        error_.note(cudaMemcpyAsync(at(dst, first), at(src, first), bytes, cudaMemcpyHostToDevice, stream));
      });
    });
  }
  ChunkUpload(const ChunkUpload&) = delete;
  ChunkUpload& operator=(const ChunkUpload&) = delete;

  /// Returns when every block's upload is enqueued; throws the first CUDA error.
  void finish() {
    if (copy_) {
      NvtxRange range("cuplan::staging::pack");
      copy_->join();
    }
    CUPLAN_CUDA_CHECK(error_.get());
  }

 private:
  void upload_block(int b) noexcept {
    const auto [first, bytes] = last_->range(b);
    error_.note(cudaMemcpyAsync(at(last_dst_, first), at(last_src_, first), bytes, cudaMemcpyHostToDevice, stream_));
  }

  FirstError error_;
  cudaStream_t stream_;
  std::optional<PartCopy> last_;
  void* last_src_ = nullptr;
  void* last_dst_ = nullptr;
  std::optional<BlockCopy> copy_;  // last: joined (by its destructor) before what its callbacks use goes
};

}  // namespace

StagingPipeline::~StagingPipeline() {
  release();
}

void StagingPipeline::ensure_streams(int device) {
  if (device_ == device && upload_ != nullptr) return;
  release_streams();
  DeviceScope scope(Device::cuda(device));
  device_ = device;
  for (cudaStream_t* s : {&upload_, &compute_, &download_})
    CUPLAN_CUDA_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
  CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&start_, cudaEventDisableTiming));
  for (int k = 0; k < max_slots; ++k) {
    for (cudaEvent_t* e : {&uploaded_[k], &computed_[k], &downloaded_[k]})
      CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    for (cudaEvent_t& e : block_downloaded_[k]) CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
}

void StagingPipeline::release() noexcept {
  in_ring_.release();
  out_ring_.release();
  in_device_.release();
  out_device_.release();
  release_streams();
}

void StagingPipeline::release_streams() noexcept {
  if (upload_ == nullptr) return;
  for (cudaStream_t s : {upload_, compute_, download_}) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(s));
  CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(start_));
  for (int k = 0; k < max_slots; ++k) {
    for (cudaEvent_t& e : {std::ref(uploaded_[k]), std::ref(computed_[k]), std::ref(downloaded_[k])}) {
      if (e != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
      e = nullptr;
    }
    for (cudaEvent_t& e : block_downloaded_[k]) {
      if (e != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
      e = nullptr;
    }
  }
  upload_ = compute_ = download_ = nullptr;
  start_ = nullptr;
  device_ = -1;
}

void StagingPipeline::drain() noexcept {
  for (cudaStream_t s : {upload_, compute_, download_})
    if (s != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(s));
}

void StagingPipeline::run(const PipelineRun& run) {
  if (run.chunks <= 0) return;
  NvtxRange range("cuplan::staging::run");
  const int slots = run.chunks == 1 ? 1 : std::clamp(run.slots, 1, max_slots);
  if (run.in_slot_bytes > 0) in_device_.ensure(slots * run.in_slot_bytes, run.device, run.caller);
  if (run.out_slot_bytes > 0) out_device_.ensure(slots * run.out_slot_bytes, run.device, run.caller);
  if (run.chunks == 1)
    run_direct(run);
  else
    run_pipelined(run);
}

// One chunk: everything on the caller's stream, no internal stream or event (the small-operand path).
void StagingPipeline::run_direct(const PipelineRun& run) {
  const cudaStream_t s = run.caller.native();
  const ChunkParts p = run.parts(0);
  void* din = p.in_device != nullptr ? p.in_device : in_device_.data();
  void* dout = p.out_device != nullptr ? p.out_device : (run.out_slot_bytes > 0 ? out_device_.data() : din);
  try {
    if (has_input(p)) {
      NvtxRange upload("cuplan::staging::upload", 0);
      void* pinned = nullptr;
      if (packs_input(p)) {
        in_ring_.ensure(1, run.in_host_bytes);
        pinned = in_ring_.slot(0);
      }
      ChunkUpload(p, din, pinned, s).finish();
    }
    if (run.compute) {
      NvtxRange compute("cuplan::staging::compute", 0);
      run.compute(0, din, dout, s);
    }
    void* staged_out = nullptr;
    if (p.out) {
      NvtxRange download("cuplan::staging::download", 0);
      void* dst = p.out->host.data();
      if (!direct(*p.out)) {
        out_ring_.ensure(1, run.out_host_bytes);
        dst = staged_out = out_ring_.slot(0);
      }
      CUPLAN_CUDA_CHECK(cudaMemcpyAsync(dst, dout, part_bytes(*p.out), cudaMemcpyDeviceToHost, s));
    }
    CUPLAN_CUDA_CHECK(cudaStreamSynchronize(s));
    if (staged_out != nullptr) unpack(staged_out, *p.out);
  } catch (...) {
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(s));  // no DMA may still touch the pinned slots
    throw;
  }
}

void StagingPipeline::run_pipelined(const PipelineRun& run) {
  const int slots = std::clamp(run.slots, 1, max_slots);
  ensure_streams(run.device);
  std::vector<ChunkParts> parts;
  std::vector<std::optional<PartCopy>> unpacks;  // per chunk: its output's unpack (none: DMA'd in place)
  std::vector<char> packs;                       // per chunk: an input part is packed into the pinned slot
  parts.reserve(static_cast<std::size_t>(run.chunks));
  unpacks.reserve(static_cast<std::size_t>(run.chunks));
  packs.reserve(static_cast<std::size_t>(run.chunks));
  bool ring_in = false, ring_out = false;
  for (std::int64_t i = 0; i < run.chunks; ++i) {
    parts.push_back(run.parts(i));
    const ChunkParts& p = parts.back();
    packs.push_back(packs_input(p) ? 1 : 0);
    ring_in = ring_in || packs.back() != 0;
    const bool staged_out = p.out && !direct(*p.out);
    ring_out = ring_out || staged_out;
    unpacks.push_back(staged_out ? std::optional(part_copy(*p.out, true)) : std::nullopt);
  }
  if (ring_in) in_ring_.ensure(slots, run.in_host_bytes);
  if (ring_out) out_ring_.ensure(slots, run.out_host_bytes);
  const bool in_place = run.out_slot_bytes == 0;
  // Chunk i's device input and output: the operation's own buffer when it gives one, else slot i % slots.
  auto device_in = [&](std::int64_t i) {
    const ChunkParts& p = parts[static_cast<std::size_t>(i)];
    return p.in_device != nullptr ? p.in_device
                                  : offset(in_device_.data(), run.in_slot_bytes, static_cast<int>(i % slots));
  };
  auto device_out = [&](std::int64_t i) {
    const ChunkParts& p = parts[static_cast<std::size_t>(i)];
    if (p.out_device != nullptr) return p.out_device;
    return in_place ? device_in(i) : offset(out_device_.data(), run.out_slot_bytes, static_cast<int>(i % slots));
  };

  // Chunk j's result is unpacked once chunk j + slots - 1 is enqueued: the host copies while the DMAs run.
  // Each block of it as soon as its own DMA is done.
  auto unpack_chunk = [&](std::int64_t j) {
    if (!unpacks[static_cast<std::size_t>(j)]) return;
    const PartCopy& c = *unpacks[static_cast<std::size_t>(j)];
    const int k = static_cast<int>(j % slots);
    NvtxRange range("cuplan::staging::unpack", j);
    FirstError error;
    BlockArrivals arrivals;
    BlockCopy(
        c.geometry, out_ring_.slot(k), parts[static_cast<std::size_t>(j)].out->host.data(), c.element_size, c.blocks,
        [&](int b) { arrivals.wait(b, c.blocks == 1 ? downloaded_[k] : block_downloaded_[k][b], error); }, {},
        Stores::streaming)
        .join();
    CUPLAN_CUDA_CHECK(error.get());
  };

  // Chunk i's compute and download are enqueued while the pool packs chunk i + 1 (when chunk i + 1's upload does
  // not wait for them: two slots or more, and no upload ordered after earlier compute steps).
  auto compute_and_download = [&](std::int64_t i) {
    const ChunkParts& p = parts[static_cast<std::size_t>(i)];
    const int k = static_cast<int>(i % slots);
    const bool reused = i >= slots;
    const bool input = has_input(p);
    void* din = device_in(i);
    void* dout = device_out(i);
    if (run.compute) {
      NvtxRange compute("cuplan::staging::compute", i);
      if (input) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(compute_, uploaded_[k], 0));
      if (reused && p.out) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(compute_, downloaded_[k], 0));
      run.compute(i, din, dout, compute_);
      CUPLAN_CUDA_CHECK(cudaEventRecord(computed_[k], compute_));
    }
    if (p.out) {
      NvtxRange download("cuplan::staging::download", i);
      if (run.compute)
        CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(download_, computed_[k], 0));
      else if (input)
        CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(download_, uploaded_[k], 0));
      if (const auto& c = unpacks[static_cast<std::size_t>(i)]) {
        // In the blocks that unpack_chunk() unpacks, each with its own event.
        for (int b = 0; b < c->blocks; ++b) {
          const auto [first, bytes] = c->range(b);
          CUPLAN_CUDA_CHECK(
              cudaMemcpyAsync(at(out_ring_.slot(k), first), at(dout, first), bytes, cudaMemcpyDeviceToHost, download_));
          if (c->blocks > 1) CUPLAN_CUDA_CHECK(cudaEventRecord(block_downloaded_[k][b], download_));
        }
      } else {
        CUPLAN_CUDA_CHECK(
            cudaMemcpyAsync(p.out->host.data(), dout, part_bytes(*p.out), cudaMemcpyDeviceToHost, download_));
      }
      CUPLAN_CUDA_CHECK(cudaEventRecord(downloaded_[k], download_));
    }
  };

  try {
    CUPLAN_CUDA_CHECK(cudaEventRecord(start_, run.caller.native()));
    for (cudaStream_t s : {upload_, compute_, download_}) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(s, start_, 0));
    std::int64_t pending = -1;     // uploaded, its compute and download not enqueued yet
    std::int64_t enqueued = -1;    // the last chunk whose compute and download are enqueued
    std::int64_t next_unpack = 0;  // the next chunk to unpack
    auto enqueue_pending = [&] {
      if (pending < 0) return;
      compute_and_download(pending);
      enqueued = pending;
      pending = -1;
    };
    // Chunk j is unpacked once chunk j + slots - 1 is enqueued (its slot is needed again only after that).
    auto unpack_behind = [&] {
      for (; next_unpack <= enqueued - (slots - 1); ++next_unpack) unpack_chunk(next_unpack);
    };
    for (std::int64_t i = 0; i < run.chunks; ++i) {
      const ChunkParts& p = parts[static_cast<std::size_t>(i)];
      const int k = static_cast<int>(i % slots);
      const bool reused = i >= slots;  // slot k held chunk i - slots
      const bool packs_chunk = packs[static_cast<std::size_t>(i)] != 0;
      const bool overlap = slots >= 2 && !p.after_computes && packs_chunk;
      if (!overlap) {
        enqueue_pending();
        unpack_behind();
      }
      std::optional<ChunkUpload> upload;
      if (has_input(p)) {
        NvtxRange range("cuplan::staging::upload", i);
        void* pinned = nullptr;
        if (packs_chunk) {
          if (reused) CUPLAN_CUDA_CHECK(cudaEventSynchronize(uploaded_[k]));  // the pinned slot is free again
          pinned = in_ring_.slot(k);
        }
        // Slot k's compute and download of chunk i - slots are enqueued: with two slots or more, chunk i - 2 at
        // the latest (an overlapping upload starts before chunk i - 1's are).
        if (reused && run.compute) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(upload_, computed_[k], 0));
        if (reused && in_place && p.out) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(upload_, downloaded_[k], 0));
        // The compute stream runs in order: its latest step's event covers every earlier one.
        if (p.after_computes && i > 0 && run.compute)
          CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(upload_, computed_[(i - 1) % slots], 0));
        upload.emplace(p, device_in(i), pinned, upload_);
      }
      if (overlap) enqueue_pending();
      if (upload) {
        NvtxRange range("cuplan::staging::upload", i);
        upload->finish();
        CUPLAN_CUDA_CHECK(cudaEventRecord(uploaded_[k], upload_));
      }
      unpack_behind();
      pending = i;
    }
    enqueue_pending();
    unpack_behind();
    for (; next_unpack < run.chunks; ++next_unpack) unpack_chunk(next_unpack);
    // Back onto the caller's stream: it continues after every internal stream (one event, re-recorded per stream:
    // each wait captures the record made just before it).
    for (cudaStream_t s : {upload_, compute_, download_}) {
      CUPLAN_CUDA_CHECK(cudaEventRecord(start_, s));
      CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(run.caller.native(), start_, 0));
    }
    for (cudaStream_t s : {upload_, compute_, download_}) CUPLAN_CUDA_CHECK(cudaStreamSynchronize(s));
  } catch (...) {
    drain();
    throw;
  }
}

}  // namespace cuplan::detail::staging
