#include "distributed/distributed_fft_impl.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "distributed/cuda_status.hpp"
#include "distributed/nccl/exchange.hpp"
#include "distributed/pack.hpp"

namespace cuplan::detail {

namespace {

Shape shape_of(const dist::Box& box) {
  Shape s;
  for (int d = 0; d < box.ndim; ++d) s.push_back(box.n[static_cast<std::size_t>(d)]);
  return s;
}

std::string text(const Shape& s) {
  return s.empty() ? std::string("()") : fmt::format("{}", fmt::join(s, "x"));
}

std::string box_text(const dist::Box& box) {
  std::vector<std::int64_t> lo(box.lo.begin(), box.lo.begin() + box.ndim);
  return fmt::format("offset ({}) extent {}", fmt::join(lo, ", "), text(shape_of(box)));
}

DistributedBox public_box(const dist::Box& box) {
  DistributedBox out;
  for (int d = 0; d < box.ndim; ++d) {
    out.offset.push_back(box.lo[static_cast<std::size_t>(d)]);
    out.extent.push_back(box.n[static_cast<std::size_t>(d)]);
  }
  return out;
}

dist::Type to_dist(FFTType t) {
  return t == FFTType::c2c ? dist::Type::c2c : t == FFTType::r2c ? dist::Type::r2c : dist::Type::c2r;
}

}  // namespace

Resolved resolve_transform(int rank, int size, const Shape& global_shape, DType dtype,
                           const DistributedFFTOptions& options) {
  Resolved r;
  r.type = options.fft_type.value_or(dtype.is_complex() ? FFTType::c2c : FFTType::r2c);
  const bool real_input = r.type == FFTType::r2c;
  if (real_input ? !(dtype == f32 || dtype == f64) : !(dtype == c64 || dtype == c128))
    throw InvalidArgument(fmt::format("local_operand: a {} transform takes {} operands, got dtype {}",
                                      to_string(r.type), real_input ? "f32 or f64" : "c64 or c128", dtype.name()));
  const bool tin = options.input_layout == InputLayout::transposed;
  const bool tout = options.result_layout == ResultLayout::optimized;
  if (tin && r.type == FFTType::r2c)
    throw InvalidArgument("input_layout: transposed input is for C2C and C2R (R2C input is real and natural)");
  if (tout && r.type == FFTType::c2r)
    throw InvalidArgument("result_layout: optimized is for C2C and R2C (the C2R result is real and natural)");
  if (tin && tout)
    throw InvalidArgument("input_layout transposed with result_layout optimized: at most one side is transposed");
  const int ndim = global_shape.size();
  if (ndim != 2 && ndim != 3)
    throw InvalidArgument(fmt::format("global_shape: expected 2 or 3 dimensions, got {}", text(global_shape)));
  for (int d = 0; d < ndim; ++d) r.real_shape[static_cast<std::size_t>(d)] = global_shape[d];
  r.complex_shape = r.real_shape;
  if (r.type != FFTType::c2c) r.complex_shape[static_cast<std::size_t>(ndim - 1)] = global_shape[ndim - 1] / 2 + 1;
  const auto request = options.decomposition == Decomposition::slab     ? dist::Request::slab
                       : options.decomposition == Decomposition::pencil ? dist::Request::pencil
                                                                        : dist::Request::automatic;
  const std::vector<std::int64_t> shape(global_shape.begin(), global_shape.end());
  r.layout =
      dist::resolve(request, options.process_grid, shape, r.complex_shape[static_cast<std::size_t>(ndim - 1)], size);
  const int last = r.layout.stages() - 1;
  r.in_box = dist::stage_box(r.layout, real_input ? r.real_shape : r.complex_shape, tin ? last : 0, rank);
  r.out_box = dist::stage_box(r.layout, r.type == FFTType::c2r ? r.real_shape : r.complex_shape, tout ? last : 0, rank);
  return r;
}

DistributedBoxes boxes_of(const Resolved& r) {
  return {public_box(r.in_box),
          public_box(r.out_box),
          r.layout.kind == dist::Kind::slab ? Decomposition::slab : Decomposition::pencil,
          {r.layout.rows, r.layout.cols}};
}

DistributedFftImpl::DistributedFftImpl(Communicator comm, const Shape& global_shape, TensorRef operand,
                                       DistributedFFTOptions options)
    : comm_(std::move(comm)), options_(std::move(options)), operand_(std::move(operand)) {
  const TensorView& op = operand_.view();
  const Resolved r = resolve_transform(comm_.rank(), comm_.size(), global_shape, op.dtype(), options_);
  type_ = r.type;
  layout_ = r.layout;
  real_shape_ = r.real_shape;
  complex_shape_ = r.complex_shape;
  in_box_ = r.in_box;
  out_box_ = r.out_box;
  in_dtype_ = op.dtype();
  complex_dtype_ = op.dtype().complex();
  out_dtype_ = type_ == FFTType::c2r ? complex_dtype_.real() : complex_dtype_;
  global_shape_.assign(global_shape.begin(), global_shape.end());
  const bool tin = options_.input_layout == InputLayout::transposed;
  const bool tout = options_.result_layout == ResultLayout::optimized;
  const int rank = comm_.rank();

  // Locations: each step reads where the previous one wrote; an exchange packs into the buffer it does not read,
  // receives into the one it read (no longer needed once packed, unless it is the caller's operand) and unpacks
  // into the send buffer, which NCCL has finished with by then in stream order.
  const auto steps = dist::pipeline(layout_, to_dist(type_), tin, tout);
  Loc at = Loc::operand;
  dist::Box box = in_box_;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const bool final_step = i + 1 == steps.size();
    Stage st;
    st.step = steps[i];
    st.src = at;
    st.src_box = box;
    const Loc other = at == Loc::buf0 ? Loc::buf1 : Loc::buf0;
    if (st.step.op == dist::Step::Op::fft) {
      st.dst = final_step ? Loc::result : other;
      const bool real_out = st.step.real_side && type_ == FFTType::c2r;
      st.dst_box = dist::stage_box(layout_, real_out ? real_shape_ : complex_shape_, st.step.stage, rank);
    } else {
      st.send = at == Loc::operand ? Loc::buf0 : other;
      st.recv = at == Loc::operand ? Loc::buf1 : at;
      st.dst = final_step ? Loc::result : st.send;
      st.exchange = dist::plan_exchange(layout_, complex_shape_, st.step.stage, st.step.to, rank);
      st.dst_box = dist::stage_box(layout_, complex_shape_, st.step.to, rank);
      buffer_elements_ = std::max({buffer_elements_, st.exchange.send_total, st.exchange.recv_total});
    }
    buffer_elements_ = std::max(buffer_elements_, st.dst_box.numel());
    at = st.dst;
    box = st.dst_box;
    stages_.push_back(std::move(st));
  }
  check_operand(op);
  if (options_.stream) construction_stream_ = options_.stream;
  pending_after_ = options_.after;
  has_operand_ = true;
}

void DistributedFftImpl::check_live(const char* what) const {
  if (freed_) throw StateError(fmt::format("DistributedFFT::{}: the object was freed", what));
}

void DistributedFftImpl::check_operand(const TensorView& op) const {
  if (!(op.dtype() == in_dtype_))
    throw InvalidArgument(fmt::format("local_operand: expected dtype {}, got {}", in_dtype_.name(), op.dtype().name()));
  if (!(op.shape() == shape_of(in_box_)))
    throw InvalidArgument(fmt::format("local_operand: expected shape {} (rank {}'s input box: {}), got {}",
                                      text(shape_of(in_box_)), comm_.rank(), box_text(in_box_), text(op.shape())));
  if (op.memory_space() != MemorySpace::device || !(op.device() == comm_.device()))
    throw InvalidArgument(
        fmt::format("local_operand: expected device memory on {} (the communicator's device), got "
                    "memory on {}",
                    comm_.device().to_string(), op.device().to_string()));
  if (!op.is_contiguous())
    throw InvalidArgument(
        fmt::format("local_operand: expected a contiguous row-major operand, got strides {}", text(op.strides())));
}

StreamRef DistributedFftImpl::pick_stream(const std::optional<StreamRef>& stream) const {
  if (stream) return *stream;
  if (construction_stream_) return *construction_stream_;
  return current_stream(comm_.device());
}

void DistributedFftImpl::begin_phase(StreamRef stream, const EventList& after) {
  if (last_phase_) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream.native(), last_phase_->native(), 0));
  for (const EventRef& e : pending_after_) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream.native(), e.native(), 0));
  pending_after_ = {};
  for (const EventRef& e : after) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream.native(), e.native(), 0));
}

void DistributedFftImpl::end_phase(StreamRef stream) {
  if (!last_phase_) last_phase_.emplace(comm_.device(), false);
  last_phase_->record(stream);
}

TensorView DistributedFftImpl::view_of(Loc loc, const dist::Box& box, bool real, const TensorView& result) const {
  switch (loc) {
    case Loc::operand:
      return operand_.view();
    case Loc::result:
      return result;
    case Loc::buf0:
    case Loc::buf1: {
      const Tensor& b = buffers_[loc == Loc::buf0 ? 0 : 1];
      return TensorView(b.data(), real ? complex_dtype_.real() : complex_dtype_, shape_of(box),
                        row_major_strides(shape_of(box)), comm_.device(), MemorySpace::device);
    }
  }
  return {};
}

void DistributedFftImpl::allocate_buffers(StreamRef stream) {
  if (buffers_live_) return;
  for (Tensor& b : buffers_) b = Tensor::empty({buffer_elements_}, complex_dtype_, comm_.device(), stream);
  buffers_live_ = true;
  // The local FFTs that read a buffer follow it to its new address.
  for (Stage& st : stages_)
    if (st.fft && st.src != Loc::operand) st.fft->reset_operand(view_of(st.src, st.src_box, false, {}), stream);
}

void DistributedFftImpl::make_ffts(StreamRef stream) {
  const int ndim = layout_.ndim;
  // cuFFT planning loads modules under a lock shared by every thread of the process, and loading a module waits
  // for the device to go idle. With ranks as threads of one process, a rank planning while its earlier exchange
  // still waits on the GPU for a peer held the lock, and the peer, planning the step before its matching
  // exchange, waited for that lock: both hung (seen on two GPUs, in cuModuleLoadData and in cuFFT's lock). So
  // the device's queued work, the earlier exchanges included, ends before cuFFT plans; the host waits here
  // without holding the lock, and the peer's planning goes on. Planning blocks anyway.
  const bool plans = std::any_of(stages_.begin(), stages_.end(),
                                 [](const Stage& st) { return st.step.op == dist::Step::Op::fft && !st.fft; });
  if (plans && comm_.size() > 1) CUPLAN_DIST_CUDA(cudaDeviceSynchronize());
  for (Stage& st : stages_) {
    if (st.step.op != dist::Step::Op::fft || st.fft) continue;
    FFTOptions o;
    o.axes = st.step.axes;
    o.fft_type = !st.step.real_side ? FFTType::c2c : type_;
    o.last_axis_parity = real_shape_[static_cast<std::size_t>(ndim - 1)] % 2 == 0 ? Parity::even : Parity::odd;
    o.normalization = options_.normalization;  // per-axis-group factors multiply to the whole transform's
    o.execution = Execution::cuda(comm_.device().index());
    o.stream = stream;
    const bool real_in = st.step.real_side && type_ == FFTType::r2c;
    st.fft.emplace(view_of(st.src, st.src_box, real_in, {}), o);
    st.fft->plan(stream);
  }
}

void DistributedFftImpl::plan(std::optional<StreamRef> stream_opt) {
  check_live("plan");
  if (!has_operand_ && stages_.front().step.op == dist::Step::Op::fft)
    throw StateError("DistributedFFT::plan: no operand (release_operand was called; reset_operand first)");
  const StreamRef stream = pick_stream(stream_opt);
  dist::DeviceGuard guard(comm_.device().index());
  begin_phase(stream, {});
  CUPLAN_DIST_CUDA(dist::load_copy_boxes_kernels());  // no module load left for a first execute (pack.hpp)
  allocate_buffers(stream);
  make_ffts(stream);
  connect_peers(stream);
  planned_ = true;
  end_phase(stream);
}

void DistributedFftImpl::connect_peers(StreamRef stream) {
  // NCCL connects two ranks at their first send/receive, and making the connection blocks the host until the
  // device's queued work is done (measured: the first execute on two GPUs returned only after a 300 ms kernel
  // queued before it had ended). One byte to and from every peer of every exchange here makes those connections
  // while plan() may block, so that execute only enqueues. Every rank plans, in the same order (the contract), so
  // the exchanges match. A connection serves every later message to that peer, whatever its size.
  std::vector<dist::Transfer> sends, recvs;
  for (const Stage& st : stages_) {
    if (st.step.op != dist::Step::Op::exchange) continue;
    for (const dist::Piece& p : st.exchange.sends)
      if (p.peer != comm_.rank()) sends.push_back({p.peer, sends.size(), 1});
    for (const dist::Piece& p : st.exchange.recvs)
      if (p.peer != comm_.rank()) recvs.push_back({p.peer, recvs.size(), 1});
    if (sends.empty() && recvs.empty()) continue;
    const auto bytes = static_cast<std::int64_t>(sends.size() + recvs.size());
    const Tensor scratch = Tensor::empty({bytes}, i8, comm_.device(), stream);
    CUPLAN_DIST_CUDA(cudaMemsetAsync(scratch.data(), 0, static_cast<std::size_t>(bytes), stream.native()));
    auto* base = static_cast<unsigned char*>(scratch.data());
    dist::exchange(comm_.native(), comm_.rank(), base, sends, base + sends.size(), recvs, stream.native());
    sends.clear();
    recvs.clear();
  }
}

void DistributedFftImpl::run_exchange(const Stage& st, const TensorView& result, StreamRef stream) {
  const std::size_t esize = complex_dtype_.size();
  const TensorView src = view_of(st.src, st.src_box, false, result);
  const TensorView send = view_of(st.send, st.src_box, false, result);
  const TensorView recv = view_of(st.recv, st.dst_box, false, result);
  const TensorView dst = view_of(st.dst, st.dst_box, false, result);
  auto strides = [](const dist::Box& b) { return std::array<std::int64_t, 3>{b.n[1] * b.n[2], b.n[2], 1}; };
  std::vector<dist::BoxCopy> copies;
  std::vector<dist::Transfer> sends;
  std::vector<dist::Transfer> recvs;
  for (const dist::Piece& p : st.exchange.sends) {
    const char* base = static_cast<const char*>(src.data());
    copies.push_back({base + dist::local_offset(st.src_box, p.box.lo) * esize,
                      static_cast<char*>(send.data()) + p.offset * esize, p.box.n, strides(st.src_box),
                      strides(p.box)});
    sends.push_back(
        {p.peer, static_cast<std::size_t>(p.offset) * esize, static_cast<std::size_t>(p.box.numel()) * esize});
  }
  dist::copy_boxes(copies, esize, stream.native());
  for (const dist::Piece& p : st.exchange.recvs)
    recvs.push_back(
        {p.peer, static_cast<std::size_t>(p.offset) * esize, static_cast<std::size_t>(p.box.numel()) * esize});
  dist::exchange(comm_.native(), comm_.rank(), send.data(), sends, recv.data(), recvs, stream.native());
  copies.clear();
  for (const dist::Piece& p : st.exchange.recvs)
    copies.push_back({static_cast<const char*>(recv.data()) + p.offset * esize,
                      static_cast<char*>(dst.data()) + dist::local_offset(st.dst_box, p.box.lo) * esize, p.box.n,
                      strides(p.box), strides(st.dst_box)});
  dist::copy_boxes(copies, esize, stream.native());
}

Tensor DistributedFftImpl::execute(const DistributedExecuteOptions& opts) {
  check_live("execute");
  if (!has_operand_)
    throw StateError("DistributedFFT::execute: no operand (release_operand was called; reset_operand first)");
  Direction direction = type_ == FFTType::c2r ? Direction::inverse : Direction::forward;
  if (opts.direction) {
    if (type_ != FFTType::c2c && *opts.direction != direction)
      throw InvalidArgument(fmt::format("direction: a {} transform is always {}, got {}", to_string(type_),
                                        to_string(direction), to_string(*opts.direction)));
    direction = *opts.direction;
  }
  const Shape out_shape = shape_of(out_box_);
  if (opts.out) {
    const TensorView& o = *opts.out;
    if (o.read_only())
      throw InvalidArgument(fmt::format(
          "DistributedFFT::execute: out: expected writable memory (the operation writes it), got a read-only view "
          "({}); pass a writable view or a copy",
          o));
    if (!(o.dtype() == out_dtype_) || !(o.shape() == out_shape) || !o.is_contiguous() ||
        o.memory_space() != MemorySpace::device || !(o.device() == comm_.device()))
      throw InvalidArgument(fmt::format(
          "out: expected a contiguous {} tensor of shape {} (rank {}'s output box: {}) in device memory on {}, got "
          "{} of shape {} on {}{}",
          out_dtype_.name(), text(out_shape), comm_.rank(), box_text(out_box_), comm_.device().to_string(),
          o.dtype().name(), text(o.shape()), o.device().to_string(), o.is_contiguous() ? "" : " (not contiguous)"));
  }
  const StreamRef stream = pick_stream(opts.stream);
  dist::DeviceGuard guard(comm_.device().index());
  begin_phase(stream, opts.after);
  allocate_buffers(stream);
  if (!planned_) {  // an execute without plan() plans first, like FFT
    make_ffts(stream);
    planned_ = true;
  }
  Tensor result = opts.out ? Tensor::wrap(*opts.out) : Tensor::empty(out_shape, out_dtype_, comm_.device(), stream);
  operand_.record_stream(stream);
  for (const Tensor& b : buffers_) b.record_stream(stream);
  for (Stage& st : stages_) {
    if (st.step.op == dist::Step::Op::exchange) {
      run_exchange(st, result.view(), stream);
      continue;
    }
    const Direction d = type_ == FFTType::c2c   ? direction
                        : type_ == FFTType::r2c ? Direction::forward
                                                : Direction::inverse;
    const bool real_out = st.step.real_side && type_ == FFTType::c2r;
    st.fft->execute({.direction = st.step.real_side ? std::optional<Direction>{} : std::optional<Direction>{d},
                     .stream = stream,
                     .after = {},
                     .release_workspace = opts.release_workspace,
                     .out = view_of(st.dst, st.dst_box, real_out, result.view())});
  }
  if (opts.release_workspace) {
    // Dropped in stream order: their recorded use on `stream` is waited for before the memory is reused.
    for (Tensor& b : buffers_) b = Tensor();
    buffers_live_ = false;
  }
  end_phase(stream);
  return result;
}

void DistributedFftImpl::reset_operand(TensorRef operand, std::optional<StreamRef> stream_opt) {
  check_live("reset_operand");
  check_operand(operand.view());
  const StreamRef stream = pick_stream(stream_opt);
  dist::DeviceGuard guard(comm_.device().index());
  begin_phase(stream, {});
  operand_ = std::move(operand);
  has_operand_ = true;
  for (Stage& st : stages_)
    if (st.fft && st.src == Loc::operand) st.fft->reset_operand(operand_, stream);
  end_phase(stream);
}

void DistributedFftImpl::release_operand() {
  check_live("release_operand");
  for (Stage& st : stages_)
    if (st.fft && st.src == Loc::operand) st.fft->release_operand();
  operand_ = TensorRef();
  has_operand_ = false;
}

void DistributedFftImpl::free() noexcept {
  if (freed_) return;
  freed_ = true;
  try {
    for (Stage& st : stages_) st.fft.reset();
    for (Tensor& b : buffers_) b = Tensor();
    operand_ = TensorRef();
    last_phase_.reset();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuplan: DistributedFFT::free: %s\n", e.what());
  }
}

DistributedBox DistributedFftImpl::input_box() const {
  check_live("input_box");
  return public_box(in_box_);
}
DistributedBox DistributedFftImpl::output_box() const {
  check_live("output_box");
  return public_box(out_box_);
}
Decomposition DistributedFftImpl::decomposition() const {
  return layout_.kind == dist::Kind::slab ? Decomposition::slab : Decomposition::pencil;
}
std::array<int, 2> DistributedFftImpl::process_grid() const {
  return {layout_.rows, layout_.cols};
}

std::string DistributedFftImpl::describe() const {
  int exchanges = 0;
  for (const Stage& st : stages_) exchanges += st.step.op == dist::Step::Op::exchange ? 1 : 0;
  return fmt::format("DistributedFFT {} {} global {} {} rank {}/{} in [{}] out [{}] {} local FFTs {} exchanges",
                     to_string(type_), complex_dtype_.name(), fmt::join(global_shape_, "x"), dist::describe(layout_),
                     comm_.rank(), comm_.size(), box_text(in_box_), box_text(out_box_),
                     static_cast<int>(stages_.size()) - exchanges, exchanges);
}

}  // namespace cuplan::detail
