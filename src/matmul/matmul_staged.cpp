#include "matmul/matmul_staged.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "base/cuda_check.hpp"
#include "cuplan/errors.hpp"
#include "matmul/matmul_impl.hpp"

namespace cuplan::detail {

namespace {

// Slots start on 256-byte boundaries so that every slot has the alignment class the inner plans were made for.
std::size_t round_up(std::size_t bytes) noexcept {
  return (bytes + 255) / 256 * 256;
}

// What an inner product may use as cuBLASLt workspace: the outer object's memory_limit (0: 32 MiB, as planning).
std::size_t workspace_reserve(const MatmulOptions& options) noexcept {
  return options.memory_limit != 0 ? options.memory_limit : std::size_t{32} << 20;
}

}  // namespace

bool StagedMatmul::eligible(const mm::Problem& problem, const TensorView& a, const TensorView& b) noexcept {
  return a.ndim() == 2 && b.ndim() == 2 && problem.batch_count == 1 && !problem.has_c && !problem.has_bias &&
         !problem.has_aux && problem.epilog == Epilog::none && !problem.a_dtype.is_fp8() && !problem.conjugate_a &&
         !problem.conjugate_b && problem.m > 0 && problem.n > 0 && problem.k > 0;
}

StagedMatmul::StagedMatmul(const MatmulOptions& options, const mm::Problem& problem, int device, const char* who)
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
  b_bytes_ = round_up(static_cast<std::size_t>(problem.k * problem.n) * problem.b_dtype.size());
  a_row_bytes_ = static_cast<std::size_t>(problem.k) * problem.a_dtype.size();
  d_row_bytes_ = static_cast<std::size_t>(problem.n) * problem.result_dtype.size();
  workspace_bytes_ = workspace_reserve(options);
  const std::size_t fixed = b_bytes_ + workspace_bytes_;
  const std::size_t minimum = fixed + round_up(a_row_bytes_) + round_up(d_row_bytes_);
  if (b_bytes_ + workspace_bytes_ > limit_)
    throw NotSupported(fmt::format(
        "{}: device_memory_limit: B ({} x {} {}) needs {} bytes on the device next to {} of workspace, more than the "
        "limit of {} bytes; splitting N is not supported, the minimum limit for this product is {} bytes",
        who, problem.k, problem.n, problem.b_dtype.name(), b_bytes_, workspace_bytes_, limit_, minimum));
  // A row of A and of D, each slot rounded up: count the rounding once per slot as part of a row's cost.
  staging::ChunkRequest request{problem.m, a_row_bytes_ + d_row_bytes_, fixed + 2 * 256 * staging::max_slots,
                                limit_,    staging::target_chunk_bytes, who};
  if (limit_ < request.fixed_bytes + request.unit_bytes)
    throw InvalidArgument(fmt::format(
        "{}: device_memory_limit: {} bytes cannot hold one row of A and D ({} bytes) next to B ({}) and the "
        "workspace ({}); the smallest limit that works is {} bytes",
        who, limit_, a_row_bytes_ + d_row_bytes_, b_bytes_, workspace_bytes_,
        request.fixed_bytes + request.unit_bytes));
  chunks_ = staging::plan_chunks(request);
}

StagedMatmul::~StagedMatmul() {
  release();  // the inner products first: their memory is ordered on the pipeline's streams
}

void StagedMatmul::plan_inner(std::unique_ptr<MatmulImpl>& inner, std::int64_t rows, StreamRef s) {
  if (inner) return;
  // Planned on stand-in device views: planning reads their layout and alignment class only, and every slot the
  // pipeline later hands in is 256-byte aligned like this address.
  void* const stand_in = reinterpret_cast<void*>(std::uintptr_t{1} << 20);
  const Shape a_shape{rows, problem_.k}, b_shape{problem_.k, problem_.n};
  const TensorView a(stand_in, problem_.a_dtype, a_shape, row_major_strides(a_shape), Device::cuda(device_),
                     MemorySpace::device);
  const TensorView b(stand_in, problem_.b_dtype, b_shape, row_major_strides(b_shape), Device::cuda(device_),
                     MemorySpace::device);
  auto made = std::make_unique<MatmulImpl>(TensorRef(a), TensorRef(b), options_, who_);
  MatmulPlanOptions plan;
  plan.stream = s;
  made->plan(plan);
  made->release_operand();
  inner = std::move(made);
}

void StagedMatmul::execute(const TensorView& a, const TensorView& b, const TensorView& d, std::complex<double> alpha,
                           std::complex<double> beta, StreamRef s) {
  const Shape b_shape{problem_.k, problem_.n};
  b_device_.ensure(b_bytes_, device_, s);
  // B once, before the pipeline starts (the pipeline's streams start after `s`).
  copy(b,
       TensorView(b_device_.data(), problem_.b_dtype, b_shape, row_major_strides(b_shape), Device::cuda(device_),
                  MemorySpace::device),
       s);
  options_.alpha = alpha;
  options_.beta = beta;
  plan_inner(full_, chunks_.chunk, s);
  if (chunks_.last != chunks_.chunk) plan_inner(last_, chunks_.last, s);
  for (MatmulImpl* inner : {full_.get(), last_.get()})
    if (inner != nullptr) inner->set_scalars(alpha, beta);

  staging::PipelineRun run;
  run.device = device_;
  run.caller = s;
  run.chunks = chunks_.count;
  run.slots = chunks_.slots;
  run.in_slot_bytes = round_up(static_cast<std::size_t>(chunks_.chunk) * a_row_bytes_);
  run.out_slot_bytes = round_up(static_cast<std::size_t>(chunks_.chunk) * d_row_bytes_);
  run.in_host_bytes = run.in_slot_bytes;
  run.out_host_bytes = run.out_slot_bytes;
  // The device layout of D's rows: the inner product's planned result strides for `rows` rows.
  auto inner_of = [&](std::int64_t rows) -> MatmulImpl& { return rows == chunks_.chunk ? *full_ : *last_; };
  auto d_strides = [&](std::int64_t rows) { return inner_of(rows).problem().result_strides; };
  run.parts = [&](std::int64_t i) {
    const std::int64_t begin = chunks_.begin(i), rows = chunks_.size(i);
    staging::ChunkParts parts;
    parts.in =
        staging::HostPart{TensorView(static_cast<std::byte*>(a.data()) +
                                         begin * a.strides()[0] * static_cast<std::int64_t>(a.dtype().size()),
                                     a.dtype(), Shape{rows, problem_.k}, a.strides(), Device::cpu(), a.memory_space()),
                          row_major_strides(Shape{rows, problem_.k})};
    parts.out =
        staging::HostPart{TensorView(static_cast<std::byte*>(d.data()) +
                                         begin * d.strides()[0] * static_cast<std::int64_t>(d.dtype().size()),
                                     d.dtype(), Shape{rows, problem_.n}, d.strides(), Device::cpu(), d.memory_space()),
                          d_strides(rows)};
    return parts;
  };
  run.compute = [&](std::int64_t i, void* in, void* out, cudaStream_t stream) {
    const std::int64_t rows = chunks_.size(i);
    const Shape a_shape{rows, problem_.k}, d_shape{rows, problem_.n};
    const TensorView a_chunk(in, problem_.a_dtype, a_shape, row_major_strides(a_shape), Device::cuda(device_),
                             MemorySpace::device);
    const TensorView d_chunk(out, problem_.result_dtype, d_shape, d_strides(rows), Device::cuda(device_),
                             MemorySpace::device);
    MatmulImpl& inner = inner_of(rows);
    MatmulOperands operands;
    operands.a = TensorRef(a_chunk);
    operands.b = TensorRef(TensorView(b_device_.data(), problem_.b_dtype, b_shape, row_major_strides(b_shape),
                                      Device::cuda(device_), MemorySpace::device));
    inner.adopt_operands(std::move(operands));
    MatmulExecuteOptions execute;
    execute.stream = StreamRef(stream);
    execute.out = d_chunk;
    (void)inner.execute(execute);
  };
  pipeline_.run(run);
}

void StagedMatmul::release() noexcept {
  full_.reset();
  last_.reset();
  b_device_.release();
  pipeline_.release();
}

}  // namespace cuplan::detail
