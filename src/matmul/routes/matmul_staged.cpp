// SPDX-License-Identifier: Apache-2.0
#include "matmul/routes/matmul_staged.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "base/cuda_check.hpp"
#include "cuplan/errors.hpp"
#include "matmul/matmul_impl.hpp"
#include "matmul/routes/device_views.hpp"

namespace cuplan::detail {

namespace {

using Kind = mm::StagingStep::Kind;

// What an inner product may use as cuBLASLt workspace: the outer object's memory_limit (0: 32 MiB, as planning).
std::size_t workspace_reserve(const MatmulOptions& options) noexcept {
  return options.memory_limit != 0 ? options.memory_limit : std::size_t{32} << 20;
}

// Element strides of a host operand against the flattened full shape (batch, rows, cols): one batch stride.
struct Walk {
  std::int64_t batch = 0, row = 0, col = 0;
};

Walk walk_of(const Shape& batch_shape, const Strides& full) {
  const int nb = batch_shape.size();
  return Walk{mm::flat_batch_stride(batch_shape, full), full[nb], full[nb + 1]};
}

// A host view of `v`'s memory `offset` elements in.
TensorView host_block(const TensorView& v, std::int64_t offset, const Shape& shape, const Strides& strides) {
  return TensorView(static_cast<std::byte*>(v.data()) + offset * static_cast<std::int64_t>(v.dtype().size()), v.dtype(),
                    shape, strides, Device::cpu(), v.memory_space());
}

void* at(void* base, std::size_t bytes) noexcept {
  return static_cast<std::byte*>(base) + bytes;
}

// A matrix stack of nb entries, or one matrix when nb == 1 (the inner products are 2-D then).
Shape stack(std::int64_t nb, std::int64_t rows, std::int64_t cols) {
  return nb > 1 ? Shape{nb, rows, cols} : Shape{rows, cols};
}

}  // namespace

const char* StagedMatmul::unsplittable(const mm::Problem& p, const StagedOperands& o) noexcept {
  if (p.m == 0 || p.n == 0 || p.k == 0) return "it is empty (M, N or K is 0)";
  bool collapsible = mm::flat_batch_stride(p.batch_shape, mm::matrix_operand_strides(o.a, p.batch_shape, true)) >= 0 &&
                     mm::flat_batch_stride(p.batch_shape, mm::matrix_operand_strides(o.b, p.batch_shape, false)) >= 0 &&
                     mm::flat_batch_stride(p.batch_shape, p.d_strides) >= 0;
  if (p.has_c) collapsible = collapsible && mm::flat_batch_stride(p.batch_shape, p.c_strides) >= 0;
  return mm::unsplittable_reason(p, collapsible);
}

StagedMatmul::StagedMatmul(const MatmulOptions& options, const mm::Problem& problem, const StagedOperands& operands,
                           int device, const char* who)
    : options_(options), problem_(problem), device_(device), who_(who) {
  options_.c.reset();
  options_.bias.reset();
  options_.epilog_aux.reset();
  options_.after = EventList{};
  options_.stream.reset();
  options_.execution = Execution::cuda(device);
  options_.blocking = Blocking::automatic;
  limit_ = options.device_memory_limit;
  if (limit_ == 0) {
    DeviceScope scope(Device::cuda(device));
    std::size_t free_bytes = 0, total_bytes = 0;
    CUPLAN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    limit_ = staging::default_limit(free_bytes);
  }
  mm::StagingRequest request;
  request.m = problem.m;
  request.n = problem.n;
  request.k = problem.k;
  request.batch = problem.batch_count;
  request.b_batched =
      problem.batch_count > 1 &&
      walk_of(problem.batch_shape, mm::matrix_operand_strides(operands.b, problem.batch_shape, false)).batch != 0;
  request.a_element = problem.a_dtype.size();
  request.b_element = problem.b_dtype.size();
  request.d_element = problem.result_dtype.size();
  request.c = problem.has_c;
  request.bias = problem.has_bias;
  request.workspace = workspace_reserve(options);
  request.limit = limit_;
  request.who = who;
  plan_ = mm::plan_staging(request);
}

StagedMatmul::~StagedMatmul() {
  release();  // the inner products first: their memory is ordered on the pipeline's streams
}

MatmulImpl& StagedMatmul::inner(const TileShape& shape, StreamRef s) {
  std::unique_ptr<MatmulImpl>& slot = inner_[shape];
  if (slot) return *slot;
  const auto [nb, rows, cols] = shape;
  // Planned on stand-in device views: planning reads their layout and alignment class only, and every slot the
  // pipeline later hands in is 256-byte aligned like this address.
  void* const stand_in = reinterpret_cast<void*>(std::uintptr_t{1} << 20);
  const bool b_in_stack = plan_.b_in_slot && nb > 1;  // a batched B travels with its entries
  const Shape a_shape = stack(nb, rows, problem_.k), b_shape = stack(b_in_stack ? nb : 1, problem_.k, cols);
  MatmulOptions options = options_;
  const Shape d_shape = stack(nb, rows, cols);
  if (problem_.has_c)
    options.c = TensorRef(mm::device_view(stand_in, problem_.result_dtype, d_shape,
                                          mm::matrix_stack_strides(d_shape, problem_.swapped), device_));
  if (problem_.has_bias) {
    const Shape bias_shape = problem_.bias_batch_stride != 0 && nb > 1 ? Shape{nb, rows} : Shape{rows};
    options.bias = TensorRef(mm::dense_view(stand_in, problem_.result_dtype, bias_shape, device_));
  }
  auto made = std::make_unique<MatmulImpl>(TensorRef(mm::dense_view(stand_in, problem_.a_dtype, a_shape, device_)),
                                           TensorRef(mm::dense_view(stand_in, problem_.b_dtype, b_shape, device_)),
                                           options, who_);
  MatmulPlanOptions plan;
  plan.stream = s;
  made->plan(plan);
  made->release_operand();
  slot = std::move(made);
  return *slot;
}

void StagedMatmul::execute(const StagedOperands& o, const TensorView& d, std::complex<double> alpha,
                           std::complex<double> beta, StreamRef s) {
  const mm::Problem& p = problem_;
  options_.alpha = alpha;
  options_.beta = beta;
  const Walk wa = walk_of(p.batch_shape, mm::matrix_operand_strides(o.a, p.batch_shape, true));
  const Walk wb = walk_of(p.batch_shape, mm::matrix_operand_strides(o.b, p.batch_shape, false));
  const Walk wd = walk_of(p.batch_shape, p.d_strides);
  const Walk wc = p.has_c ? walk_of(p.batch_shape, p.c_strides) : Walk{};
  const std::int64_t bias_batch = p.bias_batch_stride;
  // Each operand's strides along the (batch entry, row, column) space of the steps' blocks (mm::StagingStep::block),
  // 0 along an axis it does not walk: a tile's rows are A's, C's, D's and the bias's, its columns B's, C's and D's;
  // a resident_b piece's rows are B's rows (along K).
  const Strides a_at{wa.batch, wa.row, 0}, b_at{wb.batch, 0, wb.col}, b_rows_at{wb.batch, wb.row, wb.col};
  const Strides c_at{wc.batch, wc.row, wc.col}, d_at{wd.batch, wd.row, wd.col}, bias_at{bias_batch, 1, 0};
  const mm::StagingPlan& plan = plan_;
  const bool a_rows = plan.schedule == mm::StagingSchedule::a_rows;
  const bool b_in_stack = plan.b_in_slot;

  void* resident = resident_.ensure(plan.resident_bytes, device_, s);
  // The inner products of every tile shape, planned before the pipeline starts (on the caller's stream).
  std::set<TileShape> shapes;
  for (const mm::StagingStep& step : plan.steps)
    if (step.kind == Kind::tile) shapes.insert({step.batches, step.rows, step.cols});
  for (const TileShape& shape : shapes) inner(shape, s).set_scalars(alpha, beta);
  // Several inner products: each gives its workspace back after its tile (stream-ordered on the compute stream,
  // where the next one takes it again), so that one workspace reserve is held at a time.
  const bool release_workspace = inner_.size() > 1;

  // The host side of every step: a resident block written through `in_device`, or a tile's slot parts.
  auto resident_part = [&](const mm::StagingStep& step, staging::ChunkParts& parts) {
    parts.after_computes = true;
    if (step.kind == Kind::resident_b) {
      const Shape shape{step.rows, step.cols};
      parts.in = staging::HostPart{host_block(o.b, step.block().offset(b_rows_at), shape, Strides{wb.row, wb.col}),
                                   row_major_strides(shape)};
      parts.in_device = at(resident, static_cast<std::size_t>(step.block_row * step.cols) * p.b_dtype.size());
    } else if (step.kind == Kind::resident_a) {
      const Shape shape{step.rows, p.k};
      parts.in = staging::HostPart{host_block(o.a, step.block().offset(a_at), shape, Strides{wa.row, wa.col}),
                                   row_major_strides(shape)};
      parts.in_device = at(resident, static_cast<std::size_t>(step.block_row * p.k) * p.a_dtype.size());
    } else {  // resident_bias
      parts.in = staging::HostPart{host_block(*o.bias, step.block().offset(bias_at), Shape{step.rows}, Strides{1}),
                                   Strides{1}};
      parts.in_device = at(resident, plan.resident_bias);
    }
  };
  auto tile_parts = [&](const mm::StagingStep& t, staging::ChunkParts& parts) {
    const staging::ChunkBlock block = t.block();
    const std::int64_t nb = t.batches;
    const Shape d_shape{nb, t.rows, t.cols};
    const Strides d_device = mm::matrix_stack_strides(d_shape, p.swapped);
    if (a_rows) {  // the streamed block is B's columns
      const Shape shape{p.k, t.cols};
      parts.in = staging::HostPart{host_block(o.b, block.offset(b_at), shape, Strides{wb.row, wb.col}),
                                   row_major_strides(shape)};
    } else {
      const Shape shape{nb, t.rows, p.k};
      parts.in = staging::HostPart{host_block(o.a, block.offset(a_at), shape, Strides{wa.batch, wa.row, wa.col}),
                                   row_major_strides(shape)};
    }
    if (b_in_stack) {
      const Shape shape{nb, p.k, t.cols};
      parts.more_in.push_back({host_block(o.b, block.offset(b_at), shape, Strides{wb.batch, wb.row, wb.col}),
                               row_major_strides(shape), plan.slot_b});
    }
    if (p.has_c)
      parts.more_in.push_back(
          {host_block(*o.c, block.offset(c_at), d_shape, Strides{wc.batch, wc.row, wc.col}), d_device, plan.slot_c});
    if (p.has_bias && !a_rows) {
      const bool per_entry = bias_batch != 0 && nb > 1;
      const Shape shape = per_entry ? Shape{nb, t.rows} : Shape{t.rows};
      parts.more_in.push_back(
          {host_block(*o.bias, block.offset(bias_at), shape, per_entry ? Strides{bias_batch, 1} : Strides{1}),
           row_major_strides(shape), plan.slot_bias});
    }
    parts.out =
        staging::HostPart{host_block(d, block.offset(d_at), d_shape, Strides{wd.batch, wd.row, wd.col}), d_device};
  };

  // One tile (small operands): the resident blocks are copied on the caller's stream and the tile takes the
  // engine's direct path. Several: every step goes through the pipeline, so that the host packs the next block
  // while the previous one uploads.
  std::vector<const mm::StagingStep*> chunks;
  for (const mm::StagingStep& step : plan.steps) {
    if (plan.tiles == 1 && step.kind != Kind::tile) {
      staging::ChunkParts parts;
      resident_part(step, parts);
      const TensorView& host = parts.in->host;
      copy(host, mm::device_view(parts.in_device, host.dtype(), host.shape(), parts.in->device_strides, device_), s);
      continue;
    }
    chunks.push_back(&step);
  }

  staging::PipelineRun run;
  run.device = device_;
  run.caller = s;
  run.chunks = static_cast<std::int64_t>(chunks.size());
  run.slots = plan.slots;
  run.in_slot_bytes = plan.in_slot_bytes;
  run.out_slot_bytes = plan.out_slot_bytes;
  run.in_host_bytes = plan.piece_bytes;
  run.out_host_bytes = plan.out_slot_bytes;
  run.parts = [&](std::int64_t c) {
    staging::ChunkParts parts;
    const mm::StagingStep& step = *chunks[static_cast<std::size_t>(c)];
    if (step.kind == Kind::tile)
      tile_parts(step, parts);
    else
      resident_part(step, parts);
    return parts;
  };
  run.compute = [&](std::int64_t c, void* in, void* out, cudaStream_t stream) {
    const mm::StagingStep& t = *chunks[static_cast<std::size_t>(c)];
    if (t.kind != Kind::tile) return;  // a resident upload: the compute stream just passes its event
    const std::int64_t nb = t.batches;
    MatmulImpl& product = inner({nb, t.rows, t.cols}, StreamRef(stream));
    const Shape d_shape = stack(nb, t.rows, t.cols);
    MatmulOperands operands;
    if (a_rows) {
      operands.a = TensorRef(mm::dense_view(resident, p.a_dtype, Shape{t.rows, p.k}, device_));
      operands.b = TensorRef(mm::dense_view(in, p.b_dtype, Shape{p.k, t.cols}, device_));
    } else {
      operands.a = TensorRef(mm::dense_view(in, p.a_dtype, stack(nb, t.rows, p.k), device_));
      operands.b =
          TensorRef(b_in_stack ? mm::dense_view(at(in, plan.slot_b), p.b_dtype, stack(nb, p.k, t.cols), device_)
                               : mm::dense_view(resident, p.b_dtype, Shape{p.k, t.cols}, device_));
    }
    if (p.has_c)
      operands.c = TensorRef(mm::device_view(at(in, plan.slot_c), p.result_dtype, d_shape,
                                             mm::matrix_stack_strides(d_shape, p.swapped), device_));
    if (p.has_bias) {
      const Shape bias_shape = bias_batch != 0 && nb > 1 ? Shape{nb, t.rows} : Shape{t.rows};
      operands.bias = TensorRef(mm::dense_view(a_rows ? at(resident, plan.resident_bias) : at(in, plan.slot_bias),
                                               p.result_dtype, bias_shape, device_));
    }
    product.adopt_operands(std::move(operands));
    MatmulExecuteOptions execute;
    execute.stream = StreamRef(stream);
    execute.out = mm::device_view(out, p.result_dtype, product.result_shape(), product.result_strides(), device_);
    execute.release_workspace = release_workspace;
    (void)product.execute(execute);
  };
  pipeline_.run(run);
}

std::size_t StagedMatmul::held_bytes() const noexcept {
  std::size_t bytes = resident_.size() + pipeline_.device_bytes() + pipeline_.host_bytes();
  for (const auto& [shape, product] : inner_) bytes += product->held_bytes();
  return bytes;
}

void StagedMatmul::release_idle_memory() noexcept {
  for (auto& [shape, product] : inner_) product->release_idle_memory();
  resident_.release();
  pipeline_.release();
}

void StagedMatmul::release() noexcept {
  inner_.clear();
  resident_.release();
  pipeline_.release();
}

}  // namespace cuplan::detail
