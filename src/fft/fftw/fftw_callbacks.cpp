// SPDX-License-Identifier: Apache-2.0
// FftwPlan with host callbacks: the transform runs chunk by chunk along the outermost batch dimension, and each
// chunk's prolog (into a scratch buffer), FFTW transform and epilog (over the chunk's output) run back to back, so
// that the callbacks touch data still in cache instead of making passes of their own over the whole array. The
// chunks are shared out among the plan's threads.

#include <fmt/format.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <exception>
#include <vector>

#include "cuplan/errors.hpp"
#include "fft/fftw/chunk_workers.hpp"
#include "fft/fftw/fftw_backend.hpp"

namespace cuplan::detail {
namespace {

// Input and output of one chunk together: about the size of a core's L2 cache.
constexpr std::int64_t kChunkBytes = std::int64_t{1} << 19;

// The elements one side of a chunk reaches: the chunk's share of the outermost batch dimension, the other batch
// dimensions, then the transform's own axes (the halved one with n/2+1 entries on the complex side).
OutputWalk side_walk(const AdvancedLayout& l, FFTType type, bool input, std::int64_t outer_count) {
  OutputWalk walk;
  for (std::size_t i = 0; i < l.batch_dims.size(); ++i) {
    const BatchDim& b = l.batch_dims[i];
    walk.extent[walk.rank] = i == 0 ? outer_count : b.count;
    walk.stride[walk.rank++] = input ? b.in_stride : b.out_stride;
  }
  const bool complex_side = input ? type != FFTType::r2c : type != FFTType::c2r;
  for (int k = 0; k < l.rank; ++k) {
    std::int64_t stride = input ? l.istride : l.ostride;
    for (int j = k + 1; j < l.rank; ++j) stride *= input ? l.inembed[j] : l.onembed[j];
    const bool halved = type != FFTType::c2c && complex_side && k == l.rank - 1;
    walk.extent[walk.rank] = halved ? l.n[k] / 2 + 1 : l.n[k];
    walk.stride[walk.rank++] = stride;
  }
  return walk;
}

// Calls `visit(offset, count, step)` for every run of `walk` along its innermost dimension (offsets relative to the
// chunk's start); an odometer steps over the other dimensions.
template <class Visit>
void for_each_run(const OutputWalk& walk, Visit&& visit) {
  if (walk.rank == 0) {
    visit(std::int64_t{0}, std::int64_t{1}, std::int64_t{1});
    return;
  }
  const int inner = walk.rank - 1;
  const std::int64_t run = walk.extent[inner], step = walk.stride[inner];
  const std::int64_t runs = walk.count() / run;
  std::int64_t index[OutputWalk::max_rank] = {};
  std::int64_t offset = 0;
  for (std::int64_t r = 0; r < runs; ++r) {
    visit(offset, run, step);
    for (int d = inner - 1; d >= 0; --d) {
      offset += walk.stride[d];
      if (++index[d] < walk.extent[d]) break;
      offset -= walk.stride[d] * walk.extent[d];
      index[d] = 0;
    }
  }
}

// The span (elements) of a walk: the last offset reached plus one.
std::int64_t span_of(const OutputWalk& walk) {
  std::int64_t last = 0;
  for (int d = 0; d < walk.rank; ++d) last += (walk.extent[d] - 1) * walk.stride[d];
  return last + 1;
}

// The prolog's values for one chunk, into `scratch` at the chunk-relative offsets; the callable's own loop runs each
// run of elements, so its call inlines.
void apply_prolog(const FFTCallback& callback, void* in, std::int64_t base, const OutputWalk& walk, void* scratch,
                  std::size_t element_size, void* info) {
  const FFTCallback::HostRun& run = callback.host_run();
  auto* values = static_cast<unsigned char*>(scratch);
  for_each_run(walk, [&](std::int64_t offset, std::int64_t count, std::int64_t step) {
    run.loop(run.callable.get(), in, static_cast<std::uint64_t>(base + offset), count, step,
             values + offset * static_cast<std::int64_t>(element_size), info);
  });
}

// The epilog over one chunk's output: each element read and handed to the callable, which stores it.
void apply_epilog(const FFTCallback& callback, void* out, std::int64_t base, const OutputWalk& walk, void* info) {
  const FFTCallback::HostRun& run = callback.host_run();
  for_each_run(walk, [&](std::int64_t offset, std::int64_t count, std::int64_t step) {
    run.loop(run.callable.get(), out, static_cast<std::uint64_t>(base + offset), count, step, nullptr, info);
  });
}

}  // namespace

void* FftwPlan::chunk_plan(Direction direction, std::int64_t count, bool from_scratch, int in_alignment,
                           int out_alignment) {
  for (const ChunkSlot& slot : chunk_slots_)
    if (slot.direction == direction && slot.count == count && slot.from_scratch == from_scratch &&
        slot.in_alignment == in_alignment && slot.out_alignment == out_alignment)
      return slot.plan;
  LayoutDecision chunk = decision_;
  if (!chunk.layout.batch_dims.empty()) chunk.layout.batch_dims.front().count = count;
  // From the scratch buffer the transform is out of place, even where the whole one is in place.
  if (from_scratch) chunk.inplace_compute = false;
  // One thread: a chunk is sized for one core's cache, and FFTW's threads would fork and join once per chunk.
  void* plan = make_plan(chunk, direction, in_alignment, out_alignment, 1);
  chunk_slots_.push_back({direction, count, from_scratch, in_alignment, out_alignment, plan});
  return plan;
}

void FftwPlan::execute(Direction direction, void* in, void* out, double scale, CallbackSet& callbacks) {
  const AdvancedLayout& l = decision_.layout;
  const FFTType type = decision_.type;
  const bool has_prolog = callbacks.has(CallbackRole::prolog);
  const bool has_epilog = callbacks.has(CallbackRole::epilog);
  const std::int64_t outer = l.batch_dims.empty() ? 1 : l.batch_dims.front().count;
  const std::int64_t in_outer_stride = l.batch_dims.empty() ? 0 : l.batch_dims.front().in_stride;
  const std::int64_t out_outer_stride = l.batch_dims.empty() ? 0 : l.batch_dims.front().out_stride;
  const std::size_t in_size = decision_.in_dtype.size(), out_size = decision_.out_dtype.size();

  // Outer entries per chunk: as many as fit the cache budget, at least one.
  const OutputWalk one_in = side_walk(l, type, true, 1), one_out = side_walk(l, type, false, 1);
  const std::int64_t entry_bytes =
      one_in.count() * static_cast<std::int64_t>(in_size) + one_out.count() * static_cast<std::int64_t>(out_size);
  const std::int64_t per_chunk =
      std::clamp<std::int64_t>(kChunkBytes / std::max<std::int64_t>(entry_bytes, 1), 1, outer);
  // The chunks are shared out among up to threads_ workers (the calling thread is one), each with its own
  // 64-byte aligned scratch: one thread on many cores would leave the fused loop far behind FFTW's threaded plain
  // transform. The chunk plans are made first, here: FFTW's planner is not thread-safe, its execute functions are.
  const std::int64_t chunks = (outer + per_chunk - 1) / per_chunk;
  const int workers = static_cast<int>(std::clamp<std::int64_t>(threads_, 1, chunks));
  std::size_t scratch_stride = 0;
  if (has_prolog) {
    const std::int64_t scratch_elements = span_of(side_walk(l, type, true, per_chunk));
    scratch_stride = (static_cast<std::size_t>(scratch_elements) * in_size + 63) / 64 * 64;
    const std::size_t bytes = scratch_stride * static_cast<std::size_t>(workers) + 64;
    if (scratch_.size() < bytes) scratch_.assign(bytes, 0);
  }
  unsigned char* scratch = nullptr;
  if (has_prolog) {
    auto address = reinterpret_cast<std::uintptr_t>(scratch_.data());
    scratch = reinterpret_cast<unsigned char*>((address + 63) / 64 * 64);
  }

  auto* in_bytes = static_cast<unsigned char*>(in);
  auto* out_bytes = static_cast<unsigned char*>(out);
  struct Chunk {
    std::int64_t first, count;
    void* plan;
  };
  std::vector<Chunk> work;
  work.reserve(static_cast<std::size_t>(chunks));
  for (std::int64_t first = 0; first < outer; first += per_chunk) {
    const std::int64_t count = std::min(per_chunk, outer - first);
    void* chunk_in = has_prolog ? static_cast<void*>(scratch)
                                : in_bytes + first * in_outer_stride * static_cast<std::int64_t>(in_size);
    void* chunk_out = out_bytes + first * out_outer_stride * static_cast<std::int64_t>(out_size);
    work.push_back(
        {first, count, chunk_plan(direction, count, has_prolog, alignment_of(chunk_in), alignment_of(chunk_out))});
  }

  const FFTCallback* prolog = has_prolog ? &callbacks.callback(CallbackRole::prolog) : nullptr;
  const FFTCallback* epilog = has_epilog ? &callbacks.callback(CallbackRole::epilog) : nullptr;
  void* prolog_info = has_prolog ? callbacks.host_info(CallbackRole::prolog) : nullptr;
  void* epilog_info = has_epilog ? callbacks.host_info(CallbackRole::epilog) : nullptr;
  auto run_chunk = [&](const Chunk& c, unsigned char* own_scratch) {
    const std::int64_t in_base = c.first * in_outer_stride, out_base = c.first * out_outer_stride;
    void* chunk_in = in_bytes + in_base * static_cast<std::int64_t>(in_size);
    void* chunk_out = out_bytes + out_base * static_cast<std::int64_t>(out_size);
    if (prolog != nullptr) {
      apply_prolog(*prolog, in, in_base, side_walk(l, type, true, c.count), own_scratch, in_size, prolog_info);
      chunk_in = own_scratch;
    }
    run(c.plan, chunk_in, chunk_out);
    if (epilog != nullptr) apply_epilog(*epilog, out, out_base, side_walk(l, type, false, c.count), epilog_info);
  };
  // Worker w takes chunks w, w + workers, ...; the first exception a worker meets ends its share and is rethrown
  // here once every worker has stopped.
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  auto share = [&](int w) {
    try {
      unsigned char* own = scratch == nullptr ? nullptr : scratch + scratch_stride * static_cast<std::size_t>(w);
      for (std::size_t i = static_cast<std::size_t>(w); i < work.size(); i += static_cast<std::size_t>(workers))
        run_chunk(work[i], own);
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
    }
  };
  if (workers > 1 && !workers_) workers_ = std::make_unique<ChunkWorkers>();
  if (workers > 1)
    workers_->run(workers, share);
  else
    share(0);
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
  // The normalisation scales what the epilog stored, as on CUDA (where it is a pass after cuFFT's).
  if (scale != 1.0) scale_host(out, decision_.out_dtype, output_walk(l, type), scale);
}

}  // namespace cuplan::detail
