// SPDX-License-Identifier: Apache-2.0
#include "fft/routes/fft_staged.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "base/cuda_check.hpp"
#include "cuplan/errors.hpp"
#include "fft/cufft/scale.hpp"
#include "runtime/copy.hpp"

namespace cuplan::detail {

namespace {

std::size_t resolved_limit(std::size_t requested, int device) {
  if (requested != 0) return requested;
  DeviceScope scope(Device::cuda(device));
  std::size_t free_bytes = 0, total_bytes = 0;
  CUPLAN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return staging::default_limit(free_bytes);
}

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

StagedFft::StagedFft(const StagedFftRequest& request) : request_(request) {
  const LayoutDecision& d = *request.decision;
  limit_ = resolved_limit(request.limit, request.device);
  const std::size_t in_size = d.in_dtype.size(), out_size = d.out_dtype.size();
  // Batch axes, outermost in host memory first: chunks of an outer axis are the largest contiguous host blocks.
  std::vector<int> batch;
  for (int a = 0; a < d.in_shape.size(); ++a)
    if (!contains(d.axes, a) && d.in_shape[a] > 1) batch.push_back(a);
  std::stable_sort(batch.begin(), batch.end(),
                   [&](int x, int y) { return std::llabs(request.in_strides[x]) > std::llabs(request.in_strides[y]); });
  // Device bytes of one unit of batch[p] (everything inside it: the transform axes and the inner batch axes).
  auto unit_bytes = [&](std::size_t p) {
    std::size_t in_items = 1, out_items = 1;
    for (int a = 0; a < d.in_shape.size(); ++a) {
      const auto at = std::find(batch.begin(), batch.end(), a);
      if (at != batch.end() && static_cast<std::size_t>(at - batch.begin()) <= p) continue;
      in_items *= static_cast<std::size_t>(d.in_shape[a]);
      out_items *= static_cast<std::size_t>(d.out_shape[a]);
    }
    return in_items * in_size + out_items * out_size;
  };
  const std::size_t transform_bytes = unit_bytes(batch.size());  // one transform: no batch axis inside
  if (transform_bytes > limit_) {
    // Not splittable below one transform. The minimum names its workspace too: plan one transform to learn it.
    outer_axes_ = batch;  // every batch axis at extent 1: one transform
    const Piece one = make_piece(1);
    const std::size_t workspace = one.plan ? one.plan->workspace_size() : 0;
    throw NotSupported(fmt::format(
        "FFT: device_memory_limit: one transform of a host operand needs {} bytes on the device ({} bytes of data "
        "plus {} of cuFFT workspace) and cannot be split; the limit is {} bytes, the minimum for this transform is "
        "{} bytes",
        transform_bytes + workspace, transform_bytes, workspace, limit_, transform_bytes + workspace));
  }
  std::int64_t units = 1, outer_count = 1;
  if (!batch.empty()) {
    // The outermost axis whose unit fits both the preferred chunk and the limit; else the innermost.
    std::size_t p = 0;
    while (p + 1 < batch.size() && unit_bytes(p) > std::min(staging::target_chunk_bytes, limit_)) ++p;
    split_axis_ = batch[p];
    outer_axes_.assign(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(p));
    for (int a : outer_axes_) outer_count *= d.in_shape[a];
    units = d.in_shape[split_axis_];
    unit_bytes_ = unit_bytes(p);
  } else {
    unit_bytes_ = transform_bytes;
  }
  // The workspace depends on the chunk, the chunk on the room the workspace leaves: settle in a few rounds.
  std::size_t fixed = 0;
  for (int round = 0; round < 4; ++round) {
    staging::ChunkRequest chunk_request{units, unit_bytes_, fixed, limit_, staging::target_chunk_bytes, "FFT"};
    staging::ChunkPlan chunks = staging::plan_chunks(chunk_request);
    plan_pieces(chunks);
    const std::size_t workspace =
        std::max(full_.plan ? full_.plan->workspace_size() : 0, last_.plan ? last_.plan->workspace_size() : 0);
    chunk_request.fixed_bytes = workspace;
    // The split axis whole in one chunk but outer axes to walk: overlap consecutive chunks where the limit allows.
    if (outer_count > 1 && chunks.count == 1 && limit_ > workspace) {
      const std::size_t fit = (limit_ - workspace) / (static_cast<std::size_t>(chunks.chunk) * unit_bytes_);
      chunks.slots = static_cast<int>(std::clamp<std::size_t>(fit, 1, staging::max_slots));
    }
    peak_bytes_ = chunks.device_bytes(chunk_request);
    if (peak_bytes_ <= limit_) {
      grid_ = staging::ChunkGrid(d.in_shape, outer_axes_, split_axis_, chunks, "FFT");
      return;
    }
    fixed = workspace;
  }
  throw InvalidArgument(fmt::format(
      "FFT: device_memory_limit: {} bytes cannot hold one chunk with its cuFFT workspace ({} bytes per unit plus {} "
      "of workspace); the smallest limit that works is {} bytes",
      limit_, unit_bytes_, fixed, unit_bytes_ + fixed));
}

StagedFft::Piece StagedFft::make_piece(std::int64_t extent) const {
  const LayoutDecision& d = *request_.decision;
  Shape in_shape = d.in_shape, out_shape = d.out_shape;
  for (int a : outer_axes_) in_shape[a] = out_shape[a] = 1;
  if (split_axis_ >= 0) in_shape[split_axis_] = out_shape[split_axis_] = extent;
  LayoutRequest r;
  r.dtype = d.in_dtype;
  r.shape = in_shape;
  r.strides = request_.in_strides;
  r.axes = d.axes;
  r.type = d.type;
  r.parity = request_.parity;
  r.out_shape = out_shape;
  r.out_dtype = d.out_dtype;
  r.out_strides = d.out_strides;
  r.stage_input = r.stage_output = true;
  r.loop_is_costly = true;
  r.aligned_real_calls = true;
  Piece piece;
  piece.decision = plan_layout(r);
  if (piece.decision.layout.rank > 0) piece.plan = std::make_unique<CufftPlan>(piece.decision, request_.device);
  piece.walk = output_walk(piece.decision.layout, d.type);
  piece.in_bytes = static_cast<std::size_t>(checked_numel(in_shape)) * d.in_dtype.size();
  piece.out_bytes = static_cast<std::size_t>(checked_numel(out_shape)) * d.out_dtype.size();
  return piece;
}

void StagedFft::plan_pieces(const staging::ChunkPlan& chunks) {
  auto extent = [&](const Piece& piece) { return split_axis_ >= 0 ? piece.decision.in_shape[split_axis_] : 1; };
  if (full_.in_bytes == 0 || extent(full_) != chunks.chunk) full_ = make_piece(chunks.chunk);
  if (chunks.last == chunks.chunk)
    last_ = Piece{};
  else if (last_.in_bytes == 0 || extent(last_) != chunks.last)
    last_ = make_piece(chunks.last);
}

void StagedFft::execute(const TensorView& x, const TensorView& result, Direction direction, double scale, StreamRef s) {
  const LayoutDecision& d = *request_.decision;
  const int device = request_.device;
  void* workspace = nullptr;
  const std::size_t workspace_bytes =
      std::max(full_.plan ? full_.plan->workspace_size() : 0, last_.plan ? last_.plan->workspace_size() : 0);
  if (workspace_bytes > 0) workspace = workspace_.ensure(workspace_bytes, device, s);
  // Chunk c's place in the operand and the result is the grid's (one description for every staged path); its
  // extent along the split axis picks the plan of a full chunk or of the last one.
  auto piece_of = [&](std::int64_t c) -> const Piece& {
    return grid_.range(c).size == grid_.split().chunk ? full_ : last_;
  };

  staging::PipelineRun run;
  run.device = device;
  run.caller = s;
  run.chunks = chunk_count();
  run.slots = grid_.split().slots;
  run.in_slot_bytes = run.in_host_bytes = full_.in_bytes;
  run.out_slot_bytes = run.out_host_bytes = full_.out_bytes;
  run.parts = [&](std::int64_t c) {
    const std::int64_t in_offset = grid_.offset(c, x.strides()), out_offset = grid_.offset(c, result.strides());
    const Piece& piece = piece_of(c);
    staging::ChunkParts parts;
    parts.in = staging::HostPart{
        TensorView(static_cast<std::byte*>(x.data()) + in_offset * static_cast<std::int64_t>(d.in_dtype.size()),
                   d.in_dtype, piece.decision.in_shape, x.strides(), Device::cpu(), x.memory_space()),
        piece.decision.compute_in_strides};
    parts.out = staging::HostPart{
        TensorView(static_cast<std::byte*>(result.data()) + out_offset * static_cast<std::int64_t>(d.out_dtype.size()),
                   d.out_dtype, piece.decision.out_shape, result.strides(), Device::cpu(), result.memory_space()),
        piece.decision.compute_out_strides};
    return parts;
  };
  run.compute = [&](std::int64_t c, void* in, void* out, cudaStream_t stream) {
    const Piece& piece = piece_of(c);
    if (piece.plan) {
      piece.plan->bind(stream, workspace);
      piece.plan->execute(direction, in, out);
    } else {  // every transformed axis has length 1: the transform is the identity
      const LayoutDecision& pd = piece.decision;
      copy_primitive(
          TensorView(in, pd.in_dtype, pd.in_shape, pd.compute_in_strides, Device::cuda(device), MemorySpace::device),
          TensorView(out, pd.out_dtype, pd.out_shape, pd.compute_out_strides, Device::cuda(device),
                     MemorySpace::device),
          StreamRef(stream), nullptr, nullptr);
    }
    if (scale != 1.0) scale_device(out, piece.decision.out_dtype, piece.walk, scale, stream);
  };
  pipeline_.run(run);
}

void StagedFft::order_setup_before(cudaStream_t stream) {
  for (const Piece* piece : {&full_, &last_})
    if (piece->plan) piece->plan->order_setup_before(stream);
}

void StagedFft::release() noexcept {
  workspace_.release();
  pipeline_.release();
}

}  // namespace cuplan::detail
