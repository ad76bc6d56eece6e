// SPDX-License-Identifier: Apache-2.0
// DistributedFFT::execute: the local FFTs and the exchanges between them, on the caller's stream. NCCL exchanges
// pack, send, receive and unpack only where the packed layout differs from the arrays'; copy-engine exchanges copy
// each piece straight from the local FFT's output into the peer's receive buffer, chunk by chunk beside the next
// chunk's transform, between two barriers across the ranks.
#include <algorithm>

#include <fmt/format.h>

#include "base/error_context.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "distributed/distributed_fft_impl.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/exchange.hpp"
#include "distributed/option_range.hpp"
#include "distributed/pack.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan::detail {

namespace {

std::array<std::int64_t, 3> strides_of(const dist::Box& b) {
  return {b.n[1] * b.n[2], b.n[2], 1};
}

// `stream` as a cuplan writer of `tensor`: it waits for the pending producer and the reads on other streams, and is
// the producer from then on. The distributed component reaches the core library through its public API only, and
// the DLPack export handshake is the public call that makes exactly this edge (the consumer's stream waits and then
// counts as a writer, docs/streams.md); the exported tensor is dropped at once. The stream names itself as the
// producer, so that the export does not also wait for every stream that ever used the memory.
void order_as_writer(const Tensor& tensor, StreamRef stream) {
  dlpack::DLManagedTensor* exported = tensor.to_dlpack({.stream = stream, .producer = stream});
  exported->deleter(exported);
}

}  // namespace

void DistributedFftImpl::run_nccl_exchange(const Stage& st, const TensorView& result, StreamRef stream) {
  const std::size_t esize = complex_dtype_.size();
  const TensorView src = view_of(st.src, st.src_box, false, result);
  const TensorView send = view_of(st.send, st.src_box, false, result);
  const TensorView recv = view_of(st.recv, st.dst_box, false, result);
  const TensorView dst = view_of(st.dst, st.dst_box, false, result);
  std::vector<dist::BoxCopy> copies;
  std::vector<dist::Transfer> sends;
  std::vector<dist::Transfer> recvs;
  for (const dist::Piece& p : st.exchange.sends) {
    if (!st.send_direct)
      copies.push_back({static_cast<const char*>(src.data()) + dist::local_offset(st.src_box, p.box.lo) * esize,
                        static_cast<char*>(send.data()) + p.offset * esize, p.box.n, strides_of(st.src_box),
                        strides_of(p.box)});
    sends.push_back(
        {p.peer, static_cast<std::size_t>(p.offset) * esize, static_cast<std::size_t>(p.box.numel()) * esize});
  }
  dist::copy_boxes(copies, esize, stream.native());
  for (const dist::Piece& p : st.exchange.recvs)
    recvs.push_back(
        {p.peer, static_cast<std::size_t>(p.offset) * esize, static_cast<std::size_t>(p.box.numel()) * esize});
  dist::exchange(dist::state_of(comm_), comm_.rank(), send.data(), sends, recv.data(), recvs, stream.native());
  if (st.recv_direct) return;
  copies.clear();
  for (const dist::Piece& p : st.exchange.recvs)
    copies.push_back({static_cast<const char*>(recv.data()) + p.offset * esize,
                      static_cast<char*>(dst.data()) + dist::local_offset(st.dst_box, p.box.lo) * esize, p.box.n,
                      strides_of(p.box), strides_of(st.dst_box)});
  dist::copy_boxes(copies, esize, stream.native());
}

void DistributedFftImpl::run_copy_exchange(const Stage& st, const TensorView& result, StreamRef stream) {
  // Unchunked (the source is not a chunked FFT's output): every piece on the caller's stream, between barriers.
  const std::size_t esize = complex_dtype_.size();
  const TensorView src = view_of(st.src, st.src_box, false, result);
  const int self = comm_.device().index();
  peers_.barrier(stream.native());  // every peer's receive buffer is free: its readers ran before its barrier
  for (const dist::BoxTransfer& t : st.transfers.front())
    dist::enqueue_copy(t, src.data(), self, peer_slot_address(t.peer, st.peer_slot), peers_.peer(t.peer).device, esize,
                       stream.native());
  peers_.barrier(stream.native());  // every peer's pieces have landed here
  if (st.dst == Loc::result)
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(result.data(), peer_slot_address(comm_.rank(), st.peer_slot),
                                     static_cast<std::size_t>(st.dst_box.numel()) * esize, cudaMemcpyDeviceToDevice,
                                     stream.native()));
}

void DistributedFftImpl::run_fft(Stage& st, Direction direction, bool release_workspace, const TensorView& result,
                                 StreamRef stream, Stage* then_copy) {
  const Direction d = type_ == FFTType::c2c   ? direction
                      : type_ == FFTType::r2c ? Direction::forward
                                              : Direction::inverse;
  const std::optional<Direction> dir = st.step.real_side ? std::optional<Direction>{} : std::optional<Direction>{d};
  const bool real_out = st.step.real_side && type_ == FFTType::c2r;
  const TensorView out = view_of(st.dst, st.dst_box, real_out, result);
  // An in-place FFT takes no `out`: it writes its operand, which is `out`'s memory.
  const bool in_place = writes_in_place(st);
  auto out_of = [&](const TensorView& view) { return in_place ? std::optional<TensorView>{} : std::optional(view); };
  if (st.chunk_ffts.empty()) {
    st.fft->execute(
        {.direction = dir, .stream = stream, .after = {}, .release_workspace = release_workspace, .out = out_of(out)});
    return;
  }
  // Chunk c's transform on the caller's stream, then its copies on the copy stream, which waits for it; chunk
  // c+1's transform runs meanwhile. The copy stream's last copy is waited for, then every rank's (a barrier).
  const Stage& ex = *then_copy;
  const std::size_t esize = complex_dtype_.size();
  const int self = comm_.device().index();
  peers_.barrier(stream.native());  // every peer's receive buffer is free: its readers ran before its barrier
  for (std::size_t c = 0; c < st.chunk_ffts.size(); ++c) {
    st.chunk_ffts[c].execute({.direction = dir,
                              .stream = stream,
                              .after = {},
                              .release_workspace = release_workspace,
                              .out = out_of(chunk_view(out, st.dst_box, st.chunk_out_boxes[c]))});
    CUPLAN_DIST_CUDA(cudaEventRecord(chunk_events_[c], stream.native()));
    CUPLAN_DIST_CUDA(cudaStreamWaitEvent(copy_stream_, chunk_events_[c], 0));
    for (const dist::BoxTransfer& t : ex.transfers[c]) {
      // The own piece is a local copy: on the caller's stream, beside the peer copies on the copy stream.
      const bool own = t.peer == comm_.rank();
      dist::enqueue_copy(t, out.data(), self, peer_slot_address(t.peer, ex.peer_slot), peers_.peer(t.peer).device,
                         esize, own ? stream.native() : copy_stream_);
    }
  }
  CUPLAN_DIST_CUDA(cudaEventRecord(copies_done_, copy_stream_));
  CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream.native(), copies_done_, 0));
  peers_.barrier(stream.native());  // every peer's pieces have landed here
  if (ex.dst == Loc::result)
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(result.data(), peer_slot_address(comm_.rank(), ex.peer_slot),
                                     static_cast<std::size_t>(ex.dst_box.numel()) * esize, cudaMemcpyDeviceToDevice,
                                     stream.native()));
}

Tensor DistributedFftImpl::execute(const DistributedExecuteOptions& opts) try {
  check_live("execute");
  // Not planned here: plan() is collective and may block, and an execute only enqueues (docs/distributed.md).
  if (!planned_)
    throw StateError(
        "DistributedFFT::execute: expected a planned object, got one without a plan; call plan() first (collective: "
        "every "
        "rank calls it)");
  if (!has_operand_)
    throw StateError("DistributedFFT::execute: no operand (release_operand was called; reset_operand first)");
  if (opts.prolog_data || opts.epilog_data)  // DistributedFFT takes no callbacks (refused in the constructor)
    throw StateError(
        fmt::format("DistributedFFT::execute: {}: the object has no {} (DistributedFFT does not "
                    "support callbacks)",
                    opts.prolog_data ? "prolog_data" : "epilog_data", opts.prolog_data ? "prolog" : "epilog"));
  Direction direction = type_ == FFTType::c2r ? Direction::inverse : Direction::forward;
  if (opts.direction) {
    dist::check_enum(*opts.direction, Direction::inverse, "direction", "Direction");
    if (type_ != FFTType::c2c && *opts.direction != direction)
      throw InvalidArgument(fmt::format("direction: a {} transform is always {}, got {}", to_string(type_),
                                        to_string(direction), to_string(*opts.direction)));
    direction = *opts.direction;
  }
  const Shape out_shape = result_shape();
  require_defined(opts.out, "DistributedFFT::execute", "out");
  if (opts.out) {
    dist::check_local_array(
        opts.out->view(), "DistributedFFT::execute", "out",
        {.dtype = out_dtype_,
         .shape = out_shape,
         .role = fmt::format("rank {}'s output box{}", comm_.rank(),
                             options_.fields > 1 ? fmt::format(", after {} fields", options_.fields) : ""),
         .device = comm_.device(),
         .writable = true});
  }
  if (options_.inplace && opts.out)
    throw InvalidArgument(
        "DistributedFFT::execute: out: an in-place transform writes its result over the operand; expected no out, got "
        "one");
  const StreamRef stream = pick_stream(opts.stream);
  dist::DeviceGuard guard(comm_.device().index());
  phases_.begin(stream, opts.after);
  allocate_buffers(stream);
  const TensorView& op = operand_.view();
  Tensor result =
      options_.inplace
          ? Tensor::alias(operand_, TensorView(op.data(), out_dtype_, out_shape, row_major_strides(out_shape),
                                               op.device(), op.memory_space()))
      : opts.out ? opts.out->as_tensor()
                 : Tensor::empty(out_shape, out_dtype_, comm_.device(), stream);
  // A Tensor given as `out` is written like any operation's out (docs/streams.md, "cuplan Tensors across streams"):
  // the stream waits for its pending producer and its reads on other streams before the first local FFT or exchange
  // writes it, and the call becomes its producer. The local FFTs and exchanges below see borrowed views only.
  const bool out_owned = opts.out && opts.out->owning();  // a TensorView given as `out` stays borrowed
  if (out_owned) order_as_writer(result, stream);
  operand_.record_stream(stream);
  result.record_stream(stream);
  for (const Tensor& b : buffers_)
    if (b.defined()) b.record_stream(stream);
  // Several fields run one after another through the same buffers.
  for (int f = 0; f < options_.fields; ++f) {
    if (options_.fields > 1) bind_operand(f, stream);
    const TensorView out = field_slice(result.view(), f);
    for (std::size_t i = 0; i < stages_.size(); ++i) {
      Stage& st = stages_[i];
      if (st.step.op == dist::Step::Op::exchange) {
        if (route_ == Route::copy_engine)
          run_copy_exchange(st, out, stream);
        else
          run_nccl_exchange(st, out, stream);
        continue;
      }
      Stage* then_copy = st.chunk_ffts.empty() ? nullptr : &stages_[i + 1];
      run_fft(st, direction, opts.release_workspace, out, stream, then_copy);
      if (then_copy) ++i;  // its exchange ran beside the chunks
    }
  }
  if (opts.release_workspace) {
    // Dropped in stream order: their recorded use on `stream` is waited for before the memory is reused. The
    // receive buffer that peers write into stays: its address was given to them in plan().
    for (Tensor& b : buffers_) b = Tensor();
    buffers_live_ = false;
  }
  // With a timeout, the watchdog aborts the communicator when this work has not completed in time.
  dist::state_of(comm_).watch_stream(stream.native(), "DistributedFFT::execute");
  // Noted again once the whole call is enqueued: on a stream that gets its event at once (a raw cudaStream_t made
  // elsewhere), a reader on another stream then waits for all of the call's work, not only for what came before it.
  if (out_owned) order_as_writer(result, stream);
  phases_.end(stream, comm_.device());
  return result;
} catch (const LibraryError& error) {
  rethrow_with_context(error, "DistributedFFT.execute", [this] { return error_context(); });
}

}  // namespace cuplan::detail
