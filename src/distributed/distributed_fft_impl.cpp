// SPDX-License-Identifier: Apache-2.0
#include "distributed/distributed_fft_impl.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error_context.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/comm_state.hpp"
#include "distributed/exchange/nccl/exchange.hpp"
#include "distributed/pack.hpp"
#include "plan/phase.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan::detail {

DistributedFftImpl::DistributedFftImpl(Communicator comm, const Shape& global_shape, TensorRef operand,
                                       DistributedFFTOptions options)
    : comm_(std::move(comm)), options_(std::move(options)), operand_(std::move(operand)) {
  require_defined(operand_, "DistributedFFT", "local_operand");
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

  steps_ = dist::pipeline(layout_, to_dist(type_), tin, tout);
  // cuFFT would take LTO callbacks on the local single-GPU transforms, but the pipeline's pieces, fields and
  // transposed stages would each need their own offsets mapped to the global array: not built yet.
  for (const auto* callback : {&options_.prolog, &options_.epilog})
    if (*callback) {
      const char* role = callback == &options_.prolog ? "prolog" : "epilog";
      throw CallbackError(fmt::format("{}: DistributedFFT does not support prolog or epilog callbacks yet; apply "
                                      "the {} as a separate pass (docs/distributed.md, \"Callbacks\")",
                                      role, role),
                          role, "");
    }
  if (options_.chunks < 0)
    throw InvalidArgument(fmt::format("chunks: expected 0 (chosen) or a positive count, got {}", options_.chunks));
  if (options_.fields < 1) throw InvalidArgument(fmt::format("fields: expected at least 1, got {}", options_.fields));
  if (options_.inplace) {
    if (type_ != FFTType::c2c)
      throw InvalidArgument(fmt::format("inplace: expected a C2C transform (the result overwrites the operand), got {}",
                                        to_string(type_)));
    if (op.read_only())
      throw InvalidArgument(fmt::format(
          "local_operand: an in-place transform writes the operand; expected writable memory, got a read-only view "
          "({})",
          op));
    // Every rank checks every rank, so that all raise together instead of some planning alone.
    for (int r = 0; r < comm_.size(); ++r) {
      const Resolved other = resolve_transform(r, comm_.size(), global_shape, op.dtype(), options_);
      if (other.out_box.numel() > other.in_box.numel())
        throw InvalidArgument(fmt::format(
            "inplace: rank {}'s output box ({} elements) does not fit in its input box ({} elements); use an "
            "out-of-place transform, or extents that the ranks divide evenly",
            r, other.out_box.numel(), other.in_box.numel()));
    }
  }
  (void)rank;
  route_ = comm_.size() == 1 ? Route::local : Route::nccl;  // until plan() asks the peers
  build_stages();
  check_operand(op);
  if (options_.stream) construction_stream_ = options_.stream;
  phases_.set_pending(options_.after);
  has_operand_ = true;
}

void DistributedFftImpl::check_live(const char* what) const {
  if (freed_) throw StateError(fmt::format("DistributedFFT::{}: the object was freed", what));
  dist::check_not_aborted(comm_, "DistributedFFT", what);  // dead once its communicator was aborted
}

void DistributedFftImpl::check_operand(const TensorView& op) const {
  dist::check_local_array(
      op, "DistributedFFT", "local_operand",
      {.dtype = in_dtype_,
       .shape = operand_shape(),
       .role = fmt::format("rank {}'s input box: {}{}", comm_.rank(), box_text(in_box_),
                           options_.fields > 1 ? fmt::format(", after {} fields", options_.fields) : ""),
       .device = comm_.device()});
}

StreamRef DistributedFftImpl::pick_stream(const std::optional<StreamRef>& stream) const {
  return resolve_stream(stream ? stream : construction_stream_, comm_.device().index());
}

Shape DistributedFftImpl::operand_shape() const {
  Shape s;
  if (options_.fields > 1) s.push_back(options_.fields);
  for (std::int64_t n : dist::shape_of(in_box_)) s.push_back(n);
  return s;
}

Shape DistributedFftImpl::result_shape() const {
  Shape s;
  if (options_.fields > 1) s.push_back(options_.fields);
  for (std::int64_t n : dist::shape_of(out_box_)) s.push_back(n);
  return s;
}

TensorView DistributedFftImpl::field_slice(const TensorView& whole, int field) const {
  if (options_.fields == 1) return whole;
  Shape s;
  for (int d = 1; d < whole.shape().size(); ++d) s.push_back(whole.shape()[d]);
  const std::size_t bytes = static_cast<std::size_t>(checked_numel(s)) * whole.dtype().size();
  return TensorView(static_cast<const char*>(whole.data()) + static_cast<std::size_t>(field) * bytes, whole.dtype(), s,
                    row_major_strides(s), whole.device(), whole.memory_space());
}

bool DistributedFftImpl::writes_in_place(const Stage& st) const {
  // The result of an in-place transform is the operand's memory.
  return options_.inplace && (st.dst == st.src || (st.dst == Loc::result && st.src == Loc::operand));
}

void DistributedFftImpl::bind_operand(int field, StreamRef stream) {
  field_ = field;
  const TensorView op = field_slice(operand_.view(), field);
  for (Stage& st : stages_) {
    if (st.src != Loc::operand) continue;
    if (st.fft) st.fft->reset_operand(op, stream);
    for (std::size_t c = 0; c < st.chunk_ffts.size(); ++c)
      st.chunk_ffts[c].reset_operand(chunk_view(op, st.src_box, st.chunk_boxes[c]), stream);
  }
}

TensorView DistributedFftImpl::view_of(Loc loc, const dist::Box& box, bool real, const TensorView& result) const {
  switch (loc) {
    case Loc::operand:
      return field_slice(operand_.view(), field_);
    case Loc::result:
      return result;
    case Loc::peer0:
    case Loc::peer1:
      return TensorView(peer_slot_address(comm_.rank(), loc == Loc::peer0 ? 0 : 1), complex_dtype_, dist::shape_of(box),
                        row_major_strides(dist::shape_of(box)), comm_.device(), MemorySpace::device);
    case Loc::buf0:
    case Loc::buf1: {
      const Tensor& b = buffers_[loc == Loc::buf0 ? 0 : 1];
      return TensorView(b.data(), real ? complex_dtype_.real() : complex_dtype_, dist::shape_of(box),
                        row_major_strides(dist::shape_of(box)), comm_.device(), MemorySpace::device);
    }
  }
  return {};
}

void DistributedFftImpl::build_stages() {
  const int rank = comm_.rank();
  stages_.clear();
  buffer_elements_ = 0;
  peer_elements_ = 0;
  peer_slots_ = 0;
  buffer_used_[0] = buffer_used_[1] = false;
  auto other = [](Loc l) { return l == Loc::buf0 ? Loc::buf1 : Loc::buf0; };
  // Each step reads where the previous one wrote. NCCL exchanges receive into the buffer the step read (free once
  // packed) or straight into the next step's input when the packed layout would only repeat it, and send straight
  // from the source under the same condition. Copy-engine exchanges write into the peers' receive buffers.
  Loc at = Loc::operand;
  dist::Box box = in_box_;
  int copy_exchanges = 0;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const bool final_step = i + 1 == steps_.size();
    Stage st;
    st.step = steps_[i];
    st.src = at;
    st.src_box = box;
    if (st.step.op == dist::Step::Op::fft) {
      // In place, a local FFT before an exchange writes over its input (the operand or a receive buffer).
      st.dst = final_step ? Loc::result : options_.inplace ? at : other(at);
      const bool real_out = st.step.real_side && type_ == FFTType::c2r;
      st.dst_box = dist::stage_box(layout_, real_out ? real_shape_ : complex_shape_, st.step.stage, rank);
    } else {
      st.exchange = dist::plan_exchange(layout_, complex_shape_, st.step.stage, st.step.to, rank);
      st.dst_box = dist::stage_box(layout_, complex_shape_, st.step.to, rank);
      if (route_ == Route::copy_engine) {
        for (int r = 0; r < comm_.size(); ++r) {
          st.peer_boxes.push_back(dist::stage_box(layout_, complex_shape_, st.step.to, r));
          peer_elements_ = std::max(peer_elements_, st.peer_boxes.back().numel());  // alike on every rank
        }
        st.peer_slot = copy_exchanges % 2;
        ++copy_exchanges;
        peer_slots_ = std::min(copy_exchanges, 2);
        // A final exchange lands in the receive buffer, then is copied to the result.
        st.dst = final_step ? Loc::result : st.peer_slot == 0 ? Loc::peer0 : Loc::peer1;
      } else {
        st.send_direct = dist::packed_is_local_layout(st.exchange.sends, st.src_box);
        st.recv_direct = dist::packed_is_local_layout(st.exchange.recvs, st.dst_box);
        const Loc spare = at == Loc::operand ? Loc::buf0 : other(at);  // neither the source nor the operand
        if (st.send_direct) {
          st.send = at;
          st.recv = spare;
          st.dst = final_step ? Loc::result : st.recv_direct ? spare : at == Loc::operand ? Loc::buf1 : at;
        } else {
          st.send = spare;
          st.recv = at == Loc::operand ? Loc::buf1 : at;
          st.dst = final_step ? Loc::result : st.recv_direct ? st.recv : st.send;
        }
        if (st.recv_direct) st.recv = st.dst;
        buffer_elements_ = std::max({buffer_elements_, st.exchange.send_total, st.exchange.recv_total});
      }
    }
    for (Loc l : {st.src, st.dst, st.send, st.recv})
      if (l == Loc::buf0 || l == Loc::buf1) buffer_used_[l == Loc::buf0 ? 0 : 1] = true;
    buffer_elements_ = std::max({buffer_elements_, st.dst_box.numel(), st.src_box.numel()});
    at = st.dst;
    box = st.dst_box;
    stages_.push_back(std::move(st));
  }
}

void DistributedFftImpl::allocate_buffers(StreamRef stream) {
  if (buffers_live_) return;
  for (int i = 0; i < 2; ++i)
    if (buffer_used_[i]) buffers_[i] = Tensor::empty({buffer_elements_}, complex_dtype_, comm_.device(), stream);
  buffers_live_ = true;
  // The local FFTs that read a buffer follow it to its new address.
  for (Stage& st : stages_) {
    if (st.src != Loc::buf0 && st.src != Loc::buf1) continue;
    if (st.fft) st.fft->reset_operand(view_of(st.src, st.src_box, false, {}), stream);
    for (std::size_t c = 0; c < st.chunk_ffts.size(); ++c)
      st.chunk_ffts[c].reset_operand(chunk_view(view_of(st.src, st.src_box, false, {}), st.src_box, st.chunk_boxes[c]),
                                     stream);
  }
}

void DistributedFftImpl::make_ffts(StreamRef stream) {
  const int ndim = layout_.ndim;
  // cuFFT planning loads modules under a lock shared by every thread of the process, and loading a module waits
  // for the device to go idle. With ranks as threads of one process, a rank planning while its earlier exchange
  // still waits on the GPU for a peer held the lock, and the peer, planning the step before its matching
  // exchange, waited for that lock: both hung (seen on two GPUs, in cuModuleLoadData and in cuFFT's lock). So
  // the device's queued work, the earlier exchanges included, ends before cuFFT plans; the host waits here
  // without holding the lock, and the peer's planning goes on. Planning blocks anyway.
  const bool plans = std::any_of(stages_.begin(), stages_.end(), [](const Stage& st) {
    return st.step.op == dist::Step::Op::fft && !st.fft && st.chunk_ffts.empty();
  });
  if (plans && comm_.size() > 1) {
    dist::PeerWait wait(dist::state_of(comm_), "DistributedFFT::plan",
                        "the device's queued work (exchanges with the peers) before the local FFTs are planned");
    wait.synchronize_device();
  }
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    Stage& st = stages_[i];
    if (st.step.op != dist::Step::Op::fft || st.fft || !st.chunk_ffts.empty()) continue;
    FFTOptions o;
    o.axes = st.step.axes;
    o.fft_type = !st.step.real_side ? FFTType::c2c : type_;
    o.last_axis_parity = real_shape_[static_cast<std::size_t>(ndim - 1)] % 2 == 0 ? Parity::even : Parity::odd;
    o.normalization = options_.normalization;  // per-axis-group factors multiply to the whole transform's
    o.execution = Execution::cuda(comm_.device().index());
    o.inplace = writes_in_place(st);
    o.stream = stream;
    const bool real_in = st.step.real_side && type_ == FFTType::r2c;
    const TensorView src = view_of(st.src, st.src_box, real_in, {});
    // Before a copy-engine exchange the transform runs in chunks along axis 0 (whole rows of the other axes,
    // contiguous on both sides), so that a chunk's copies overlap the next chunk's transform.
    const bool feeds_copies =
        i + 1 < stages_.size() && route_ == Route::copy_engine && stages_[i + 1].step.op == dist::Step::Op::exchange;
    const bool axis0_free = std::find(st.step.axes.begin(), st.step.axes.end(), 0) == st.step.axes.end();
    const int chunks = static_cast<int>(
        std::min<std::int64_t>(options_.chunks > 0 ? options_.chunks : default_chunks, st.src_box.n[0]));
    // Chunks start on whole rows; cuFFT wants them aligned like the element type, so rows of a size that would
    // misalign a chunk (odd real rows) keep the transform whole.
    auto row_bytes = [](const dist::Box& b, std::size_t element) { return b.n[1] * b.n[2] * element; };
    const std::size_t src_element = real_in ? complex_dtype_.real().size() : complex_dtype_.size();
    const bool aligned =
        row_bytes(st.src_box, src_element) % 16 == 0 && row_bytes(st.dst_box, complex_dtype_.size()) % 16 == 0;
    if (feeds_copies && axis0_free && aligned && chunks > 1) {
      for (int c = 0; c < chunks; ++c) {
        st.chunk_boxes.push_back(dist::chunk_box(st.src_box, 0, chunks, c));
        st.chunk_out_boxes.push_back(dist::chunk_box(st.dst_box, 0, chunks, c));
        st.chunk_ffts.emplace_back(chunk_view(src, st.src_box, st.chunk_boxes.back()), o);
        st.chunk_ffts.back().plan(stream);
      }
      continue;
    }
    st.fft.emplace(src, o);
    st.fft->plan(stream);
  }
}

void DistributedFftImpl::plan_transfers() {
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    Stage& st = stages_[i];
    if (st.step.op != dist::Step::Op::exchange || route_ != Route::copy_engine) continue;
    st.transfers.clear();
    const std::vector<dist::Box> whole{st.src_box};
    const std::vector<dist::Box>& chunks =
        i > 0 && !stages_[i - 1].chunk_ffts.empty() ? stages_[i - 1].chunk_out_boxes : whole;
    for (const dist::Box& chunk : chunks)
      st.transfers.push_back(dist::chunk_transfers(st.exchange, chunk, st.src_box, st.peer_boxes, comm_.rank()));
  }
}

void DistributedFftImpl::agree_and_route(StreamRef stream) {
  if (comm_.size() == 1) {
    route_ = Route::local;
    route_known_ = true;
    return;
  }
  // What every rank must plan alike. A rank whose shape, type or options differ would post other exchanges and
  // hang its peers; one gather in plan() finds it and every rank raises the same error.
  static constexpr std::string_view names[] = {"ndim",
                                               "global_shape[0]",
                                               "global_shape[1]",
                                               "global_shape[2]",
                                               "fft_type",
                                               "dtype bytes",
                                               "decomposition (0 slab, 1 pencil)",
                                               "process_grid rows",
                                               "process_grid cols",
                                               "result_layout",
                                               "input_layout",
                                               "normalization",
                                               "exchange",
                                               "chunks",
                                               "fields",
                                               "inplace"};
  dist::AgreementValues v{};
  v[0] = layout_.ndim;
  for (std::size_t d = 0; d < 3; ++d) v[1 + d] = d < global_shape_.size() ? global_shape_[d] : 0;
  v[4] = static_cast<std::int64_t>(type_);
  v[5] = static_cast<std::int64_t>(complex_dtype_.size());
  v[6] = layout_.kind == dist::Kind::slab ? 0 : 1;
  v[7] = layout_.rows;
  v[8] = layout_.cols;
  v[9] = static_cast<std::int64_t>(options_.result_layout);
  v[10] = static_cast<std::int64_t>(options_.input_layout);
  v[11] = static_cast<std::int64_t>(options_.normalization);
  v[12] = static_cast<std::int64_t>(options_.exchange);
  v[13] = options_.chunks;
  v[14] = options_.fields;
  v[15] = options_.inplace ? 1 : 0;
  peers_.agree(dist::state_of(comm_), comm_.rank(), comm_.size(), comm_.device().index(), v, names,
               "DistributedFFT::plan", stream.native());
  if (options_.exchange == ExchangeMethod::copy_engine && !peers_.all_reachable())
    throw InvalidArgument(
        fmt::format("exchange: copy_engine needs every rank to address every other rank's memory, but {}; use "
                    "ExchangeMethod::nccl or automatic",
                    peers_.why_not()));
  route_ = options_.exchange != ExchangeMethod::nccl && peers_.all_reachable() ? Route::copy_engine : Route::nccl;
  route_known_ = true;
  log_route();
}

void DistributedFftImpl::plan_collective(StreamRef stream) {
  // Collective steps first, in the same order on every rank: agreement and route, the receive buffers, then the
  // connections NCCL makes at a first message.
  if (!route_known_) {
    agree_and_route(stream);
    build_stages();
  }
  if (route_ == Route::copy_engine) {
    peers_.share_buffers(static_cast<std::size_t>(peer_elements_ * peer_slots_) * complex_dtype_.size(),
                         "DistributedFFT::plan", stream.native());
    if (copy_stream_ == nullptr) {
      CUPLAN_DIST_CUDA(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
      CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&copies_done_, cudaEventDisableTiming));
    }
  }
  allocate_buffers(stream);
  make_ffts(stream);
  plan_transfers();
  std::size_t events = 0;
  for (const Stage& st : stages_) events = std::max(events, st.chunk_ffts.size());
  while (chunk_events_.size() < events) {
    cudaEvent_t e = nullptr;
    CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    chunk_events_.push_back(e);
  }
  if (route_ == Route::nccl) connect_peers(stream);
  if (comm_.size() > 1) {
    // No rank leaves plan before every rank has planned. A rank that went on would enqueue an exchange that waits
    // on its GPU for the others; its next kernel launch outside cuplan (lazy module loading) then waits for that
    // GPU to idle while holding the process's loader lock, which a rank still planning its cuFFT plans needs: with
    // ranks as threads both hung (seen in the distributed Poisson sample, whose first execute plans).
    dist::PeerWait wait(dist::state_of(comm_), "DistributedFFT::plan",
                        "the final barrier (every rank's plan() reaching its end)");
    peers_.barrier(stream.native());
    wait.synchronize(stream.native());
  }
  planned_ = true;
}

void DistributedFftImpl::plan(std::optional<StreamRef> stream_opt) try {
  check_live("plan");
  if (!has_operand_ && stages_.front().step.op == dist::Step::Op::fft)
    throw StateError("DistributedFFT::plan: no operand (release_operand was called; reset_operand first)");
  const StreamRef stream = pick_stream(stream_opt);
  dist::DeviceGuard guard(comm_.device().index());
  phases_.begin(stream, {});
  CUPLAN_DIST_CUDA(dist::load_copy_boxes_kernels());  // no module load left for a first execute (pack.hpp)
  plan_collective(stream);
  phases_.end(stream, comm_.device());
} catch (const LibraryError& error) {
  rethrow_with_context(error, "DistributedFFT.plan", [this] { return error_context(); });
}

void DistributedFftImpl::connect_peers(StreamRef stream) {
  // NCCL connects two ranks at their first send/receive, and making the connection blocks the host until the
  // device's queued work is done (measured: the first execute on two GPUs returned only after a 300 ms kernel
  // queued before it had ended). One byte to and from every peer of every exchange here makes those connections
  // while plan() may block, so that execute only enqueues. Every rank plans, in the same order (the contract), so
  // the exchanges match. A connection serves every later message to that peer, whatever its size.
  dist::PeerWait wait(dist::state_of(comm_), "DistributedFFT::plan",
                      "the first message to and from each peer of the exchanges (NCCL's connections)");
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
    dist::exchange(dist::state_of(comm_), comm_.rank(), base, sends, base + sends.size(), recvs, stream.native());
    sends.clear();
    recvs.clear();
  }
}

void DistributedFftImpl::release_copy_resources() noexcept {
  for (cudaEvent_t e : chunk_events_) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(e));
  chunk_events_.clear();
  if (copies_done_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(copies_done_));
  copies_done_ = nullptr;
  if (copy_stream_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaStreamDestroy(copy_stream_));
  copy_stream_ = nullptr;
  peers_.release();
}

void* DistributedFftImpl::peer_slot_address(int rank, int slot) const {
  const std::size_t offset = static_cast<std::size_t>(slot * peer_elements_) * complex_dtype_.size();
  return static_cast<char*>(peers_.peer(rank).address) + offset;
}

ExchangeMethod DistributedFftImpl::exchange_method() const {
  check_live("exchange_method");
  return route_known_ && route_ == Route::copy_engine ? ExchangeMethod::copy_engine
         : route_known_ && route_ == Route::nccl      ? ExchangeMethod::nccl
                                                      : ExchangeMethod::automatic;
}

std::size_t DistributedFftImpl::device_memory_bytes() const {
  check_live("device_memory_bytes");
  if (!planned_) return 0;
  std::size_t bytes = peers_.buffer_bytes();
  for (int i = 0; i < 2; ++i)
    if (buffer_used_[i] && buffers_live_) bytes += static_cast<std::size_t>(buffer_elements_) * complex_dtype_.size();
  for (const Stage& st : stages_) {
    if (st.fft) bytes += st.fft->workspace_size();
    for (const FFT& f : st.chunk_ffts) bytes += f.workspace_size();
  }
  return bytes;
}

void DistributedFftImpl::log_route() const {
  if (comm_.rank() != 0) return;
  log_message(LogLevel::info, fmt::format("DistributedFFT: exchanges by {} over {} ranks{}",
                                          route_ == Route::copy_engine ? "copy engine" : "NCCL", comm_.size(),
                                          route_ == Route::copy_engine || options_.exchange == ExchangeMethod::nccl
                                              ? std::string()
                                              : fmt::format(" ({})", peers_.why_not())));
}
void DistributedFftImpl::reset_operand(TensorRef operand, std::optional<StreamRef> stream_opt) try {
  check_live("reset_operand");
  require_defined(operand, "DistributedFFT::reset_operand", "operand");
  check_operand(operand.view());
  if (options_.inplace && operand.view().read_only())
    throw InvalidArgument(fmt::format(
        "reset_operand: an in-place transform writes the operand; expected writable memory, got a read-only view ({})",
        operand.view()));
  const StreamRef stream = pick_stream(stream_opt);
  dist::DeviceGuard guard(comm_.device().index());
  phases_.begin(stream, {});
  operand_ = std::move(operand);
  has_operand_ = true;
  bind_operand(0, stream);
  phases_.end(stream, comm_.device());
} catch (const LibraryError& error) {
  rethrow_with_context(error, "DistributedFFT.reset_operand", [this] { return error_context(); });
}

void DistributedFftImpl::release_operand() {
  check_live("release_operand");
  for (Stage& st : stages_) {
    if (st.src != Loc::operand) continue;
    if (st.fft) st.fft->release_operand();
    for (FFT& f : st.chunk_ffts) f.release_operand();
  }
  operand_ = TensorRef();
  has_operand_ = false;
}

void DistributedFftImpl::free() noexcept {
  if (freed_) return;
  freed_ = true;
  try {
    for (Stage& st : stages_) {
      st.fft.reset();
      st.chunk_ffts.clear();
    }
    for (Tensor& b : buffers_) b = Tensor();
    release_copy_resources();
    operand_ = TensorRef();
    phases_.reset();
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
  std::size_t chunks = 1;
  for (const Stage& st : stages_) chunks = std::max(chunks, st.chunk_ffts.size());
  const char* route = !route_known_                  ? "exchange chosen in plan()"
                      : route_ == Route::copy_engine ? "exchange by copy engine"
                      : route_ == Route::nccl        ? "exchange by NCCL"
                                                     : "no exchange";
  return fmt::format(
      "DistributedFFT {} {} global {} {} rank {}/{} in [{}] out [{}] {} local FFTs {} exchanges, {}, {} chunk(s), "
      "{} field(s){}, {:.1f} MiB held ({:.2f}x the input box)",
      to_string(type_), complex_dtype_.name(), fmt::join(global_shape_, "x"), dist::describe(layout_), comm_.rank(),
      comm_.size(), box_text(in_box_), box_text(out_box_), static_cast<int>(stages_.size()) - exchanges, exchanges,
      route, chunks, options_.fields, options_.inplace ? ", in place" : "",
      static_cast<double>(device_memory_bytes()) / (1 << 20),
      static_cast<double>(device_memory_bytes()) /
          static_cast<double>(std::max<std::int64_t>(1, in_box_.numel()) * in_dtype_.size()));
}

std::string DistributedFftImpl::error_context() const {
  return fmt::format("{} {} -> {}, global shape {}, {} rank {} of {}, on {}", to_string(type_), in_dtype_.name(),
                     out_dtype_.name(), fmt::join(global_shape_, "x"), dist::describe(layout_), comm_.rank(),
                     comm_.size(), comm_.device().to_string());
}

}  // namespace cuplan::detail
