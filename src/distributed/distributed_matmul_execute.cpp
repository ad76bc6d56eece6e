// SPDX-License-Identifier: Apache-2.0
// DistributedMatmul's local products and execute: operands redistributed to the algorithm's layouts where they
// differ, the algorithm on the caller's stream with its transfers on a side stream (block k+1 or panel p+1 moving
// while the product of block k or panel p runs), D redistributed to the caller's layout where it differs, and the
// elementwise pass (beta C, bias, activation) where the local products could not do it.
#include <algorithm>

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "distributed/distributed_matmul_impl.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/collectives.hpp"
#include "distributed/exchange/nccl/exchange.hpp"

namespace cuplan::detail {

namespace {

std::size_t bytes_of(std::int64_t elements, DType dtype) {
  return static_cast<std::size_t>(elements) * dtype.size();
}

}  // namespace

LogicalMatrix DistributedMatmulImpl::a_source() const {
  const dist::LocalArray& array = r_.native.a[static_cast<std::size_t>(rank_)];
  const void* data = r_.plan.move_a ? a_native_.data() : a_.view().data();
  return {data, in_dtype_, array.shape[0], array.shape[1], r_.problem.ta, comm_.device()};
}

LogicalMatrix DistributedMatmulImpl::b_source() const {
  const dist::LocalArray& array = r_.native.b[static_cast<std::size_t>(rank_)];
  const void* data = r_.plan.move_b ? b_native_.data() : b_.view().data();
  return {data, in_dtype_, array.shape[0], array.shape[1], r_.problem.tb, comm_.device()};
}

LogicalMatrix DistributedMatmulImpl::slot_matrix(int slot, std::int64_t stored_rows, std::int64_t stored_cols,
                                                 bool transposed, std::size_t byte_offset, DType dtype) const {
  const void* data = static_cast<const char*>(slots_[slot].data()) + byte_offset;
  return {data, dtype, stored_rows, stored_cols, transposed, comm_.device()};
}

TensorView DistributedMatmulImpl::rows_of(const TensorView& m, std::int64_t r0, std::int64_t h) const {
  const std::int64_t cols = m.shape()[1];
  return TensorView(static_cast<const char*>(m.data()) + bytes_of(r0 * cols, m.dtype()), m.dtype(), Shape{h, cols},
                    Strides{cols, 1}, comm_.device(), MemorySpace::device);
}

MatmulOptions DistributedMatmulImpl::product_options(bool with_c, bool fold_activation) const {
  MatmulOptions o;
  o.alpha = options_.alpha;
  o.beta = with_c ? options_.beta : std::complex<double>(0.0);
  o.epilog = !fold_activation ? Epilog::none : activation_ == dist::Activation::relu ? Epilog::relu : Epilog::gelu;
  o.compute = options_.compute;
  o.execution = Execution::cuda(comm_.device().index());
  o.result_dtype = out_dtype_;
  return o;
}

void DistributedMatmulImpl::make_products(StreamRef s) {
  products_.clear();
  const dist::Problem& p = r_.problem;
  const auto i = static_cast<std::size_t>(rank_);
  const bool fold_c = fold_ && has_c_;
  const bool fold_act = fold_ && !has_bias_ && activation_ != dist::Activation::none;
  const LogicalMatrix a = a_source(), b = b_source();
  auto add = [&](const TensorView& av, const TensorView& bv, MatmulOptions o) {
    o.stream = s;
    products_.emplace_back(av, bv, o);
    products_.back().plan({.preferences = {}, .epilog = {}, .bias = {}, .epilog_aux = {}, .stream = s, .after = {}});
  };
  switch (r_.plan.algo) {
    case dist::Algo::local: {
      MatmulOptions o = product_options(fold_c, fold_act);
      if (fold_c) o.c = *c_;
      add(a.whole(), b.whole(), o);
      break;
    }
    case dist::Algo::allgather: {
      // Step s multiplies the block of A that started on rank (rank - s) mod size by this rank's B.
      for (int step = 0; step < size_; ++step) {
        const int owner = (rank_ - step + size_) % size_;
        const dist::Block rows = dist::split(p.m, size_, owner);
        const std::int64_t stored_rows = p.ta ? p.k : rows.size, stored_cols = p.ta ? rows.size : p.k;
        const LogicalMatrix held =
            step == 0 ? a
            : gather_.prepared()
                ? LogicalMatrix{gather_.block(owner), in_dtype_, stored_rows, stored_cols, p.ta, comm_.device()}
                : slot_matrix(step % 2, stored_rows, stored_cols, p.ta, 0, in_dtype_);
        MatmulOptions o = product_options(fold_c, fold_act);
        if (fold_c) o.c = TensorRef(rows_of(c_->view(), rows.offset, rows.size));
        add(held.whole(), b.whole(), o);
      }
      break;
    }
    case dist::Algo::reduce_scatter: {
      // Product j is this rank's share of D's row block j (rank j's), summed onto rank j.
      for (int j = 0; j < size_; ++j) {
        const dist::Block rows = dist::split(p.m, size_, j);
        add(a.block(rows.offset, rows.size, 0, a.cols()), b.whole(), product_options(false, false));
      }
      break;
    }
    case dist::Algo::summa: {
      const std::int64_t mi = r_.native.d[i].shape[0], nj = r_.native.d[i].shape[1];
      const TensorView acc = d_native_.view();
      for (std::size_t q = 0; q < panels_.size(); ++q) {
        const std::int64_t w = panels_[q].width;
        const int slot = static_cast<int>(q % 2);
        const LogicalMatrix ap = slot_matrix(slot, p.ta ? w : mi, p.ta ? mi : w, p.ta, 0, in_dtype_);
        const LogicalMatrix bp = slot_matrix(slot, p.tb ? nj : w, p.tb ? w : nj, p.tb, slot_b_offset_, in_dtype_);
        MatmulOptions o = product_options(q > 0, false);
        if (q > 0) {
          o.c = TensorRef(acc);
          o.beta = 1.0;  // the panels before this one, already scaled by alpha
        }
        add(ap.whole(), bp.whole(), o);
      }
      break;
    }
  }
  ensure_events(products_.size());
}

void DistributedMatmulImpl::run_allgather(const TensorView& target, const DistributedMatmulExecuteOptions& o,
                                          StreamRef s) {
  const dist::Problem& p = r_.problem;
  CUPLAN_DIST_CUDA(cudaEventRecord(fork_, s.native()));
  CUPLAN_DIST_CUDA(cudaStreamWaitEvent(side_, fork_, 0));
  const void* own = a_source().data;
  if (gather_.prepared()) {
    // Every block is pushed at once by its owner on the side stream; the product of step s waits for its block's
    // flag only, and the copies never wait for a multiprocessor.
    gather_.push(own, side_);
    for (int step = 0; step < size_; ++step) {
      if (step >= 1) gather_.wait_for((rank_ - step + size_) % size_, s.native());
      run_gathered_product(step, target, o, s);
    }
    gather_.finish(s.native());
    CUPLAN_DIST_CUDA(cudaEventRecord(join_, side_));
    CUPLAN_DIST_CUDA(cudaStreamWaitEvent(s.native(), join_, 0));
    return;
  }
  const int next = (rank_ + 1) % size_, prev = (rank_ - 1 + size_) % size_;
  for (int step = 0; step < size_; ++step) {
    const int owner = (rank_ - step + size_) % size_;
    if (step + 1 < size_) {
      // Pass the held block on and receive the next one into the other slot, once the product that read that slot
      // (two steps back) is done.
      if (step >= 1) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(side_, product_done_[static_cast<std::size_t>(step - 1)], 0));
      const int incoming = (owner - 1 + size_) % size_;
      const dist::Transfer send{next, 0, bytes_of(dist::split(p.m, size_, owner).size * p.k, in_dtype_)};
      const dist::Transfer recv{prev, 0, bytes_of(dist::split(p.m, size_, incoming).size * p.k, in_dtype_)};
      const void* held = step == 0 ? own : slots_[step % 2].data();
      dist::exchange(dist::state_of(comm_), rank_, held, {&send, 1}, slots_[(step + 1) % 2].data(), {&recv, 1}, side_);
      CUPLAN_DIST_CUDA(cudaEventRecord(transfer_done_[static_cast<std::size_t>(step)], side_));
    }
    if (step >= 1)
      CUPLAN_DIST_CUDA(cudaStreamWaitEvent(s.native(), transfer_done_[static_cast<std::size_t>(step - 1)], 0));
    run_gathered_product(step, target, o, s);
  }
}

// The product of step `step`: the block of A that started on rank (rank - step) mod size, times this rank's B, into
// that block's rows of D.
void DistributedMatmulImpl::run_gathered_product(int step, const TensorView& target,
                                                 const DistributedMatmulExecuteOptions& o, StreamRef s) {
  const dist::Problem& p = r_.problem;
  const int owner = (rank_ - step + size_) % size_;
  const dist::Block rows = dist::split(p.m, size_, owner);
  const TensorView block = rows_of(target, rows.offset, rows.size);
  // A local product writes a 16-byte aligned D (Matmul's contract); a block that starts elsewhere is written into
  // the staging buffer and copied.
  const bool direct = reinterpret_cast<std::uintptr_t>(block.data()) % 16 == 0;
  if (!direct && !stage_.defined())
    stage_ = Tensor::empty({dist::split(p.m, size_, 0).size * target.shape()[1]}, out_dtype_, comm_.device(), s);
  if (!direct) stage_.record_stream(s);
  const TensorView out = direct ? block
                                : TensorView(stage_.data(), out_dtype_, block.shape(), block.strides(), comm_.device(),
                                             MemorySpace::device);
  products_[static_cast<std::size_t>(step)].execute(
      {.stream = s, .after = {}, .release_workspace = o.release_workspace, .out = out});
  if (!direct)
    CUPLAN_DIST_CUDA(cudaMemcpyAsync(const_cast<void*>(block.data()), stage_.data(),
                                     bytes_of(block.numel(), out_dtype_), cudaMemcpyDeviceToDevice, s.native()));
  CUPLAN_DIST_CUDA(cudaEventRecord(product_done_[static_cast<std::size_t>(step)], s.native()));
}

void DistributedMatmulImpl::run_reduce_scatter(const TensorView& target, const DistributedMatmulExecuteOptions& o,
                                               StreamRef s) {
  const dist::Problem& p = r_.problem;
  // Every rank reduces the row blocks in the same order (collectives must match); block j's reduction runs while
  // block j+1's product does.
  for (int j = 0; j < size_; ++j) {
    const dist::Block rows = dist::split(p.m, size_, j);
    // Row block j at its own 256-byte aligned place (a local product writes an aligned D).
    const TensorView piece(static_cast<char*>(partial_.data()) + partial_offsets_[static_cast<std::size_t>(j)],
                           out_dtype_, Shape{rows.size, p.n}, Strides{p.n, 1}, comm_.device(), MemorySpace::device);
    products_[static_cast<std::size_t>(j)].execute(
        {.stream = s, .after = {}, .release_workspace = o.release_workspace, .out = piece});
    CUPLAN_DIST_CUDA(cudaEventRecord(product_done_[static_cast<std::size_t>(j)], s.native()));
    CUPLAN_DIST_CUDA(cudaStreamWaitEvent(side_, product_done_[static_cast<std::size_t>(j)], 0));
    void* recv = j == rank_ ? const_cast<void*>(target.data()) : const_cast<void*>(piece.data());
    dist::reduce_sum(dist::state_of(comm_), piece.data(), recv, static_cast<std::size_t>(rows.size * p.n), out_dtype_,
                     j, side_);
  }
  CUPLAN_DIST_CUDA(cudaEventRecord(join_, side_));
  CUPLAN_DIST_CUDA(cudaStreamWaitEvent(s.native(), join_, 0));
}

void DistributedMatmulImpl::run_summa(const TensorView& acc, const DistributedMatmulExecuteOptions& o, StreamRef s) {
  const dist::Problem& p = r_.problem;
  const int cols = r_.plan.grid_cols, rows = r_.plan.grid_rows;
  const int row = rank_ / cols, col = rank_ % cols;
  const auto i = static_cast<std::size_t>(rank_);
  const std::int64_t mi = r_.native.d[i].shape[0], nj = r_.native.d[i].shape[1];
  const std::size_t es = in_dtype_.size();
  const LogicalMatrix a = a_source(), b = b_source();
  const dist::Block ka = dist::split(p.k, cols, col), kb = dist::split(p.k, rows, row);
  CUPLAN_DIST_CUDA(cudaEventRecord(fork_, s.native()));
  CUPLAN_DIST_CUDA(cudaStreamWaitEvent(side_, fork_, 0));
  for (std::size_t q = 0; q < panels_.size(); ++q) {
    const dist::Panel& panel = panels_[q];
    const std::size_t w = static_cast<std::size_t>(panel.width);
    char* slot = static_cast<char*>(slots_[q % 2].data());
    // The slot was last read by the product two panels back.
    if (q >= 2) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(side_, product_done_[q - 2], 0));
    std::vector<dist::Transfer> sends, recvs;
    const std::size_t a_bytes = static_cast<std::size_t>(mi) * w * es, b_bytes = w * static_cast<std::size_t>(nj) * es;
    if (panel.a_owner == col) {
      // Columns [k0, k0 + w) of this rank's op(A): a strided copy of the stored rows, or contiguous stored rows.
      const auto first = static_cast<std::size_t>(panel.k0 - ka.offset);
      if (!p.ta)
        CUPLAN_DIST_CUDA(cudaMemcpy2DAsync(slot, w * es, static_cast<const char*>(a.data) + first * es,
                                           static_cast<std::size_t>(a.stored_cols) * es, w * es,
                                           static_cast<std::size_t>(mi), cudaMemcpyDeviceToDevice, side_));
      else
        CUPLAN_DIST_CUDA(cudaMemcpyAsync(slot,
                                         static_cast<const char*>(a.data) + first * static_cast<std::size_t>(mi) * es,
                                         a_bytes, cudaMemcpyDeviceToDevice, side_));
      for (int c = 0; c < cols; ++c)
        if (c != col) sends.push_back({row * cols + c, 0, a_bytes});
    } else {
      recvs.push_back({row * cols + panel.a_owner, 0, a_bytes});
    }
    if (panel.b_owner == row) {
      const auto first = static_cast<std::size_t>(panel.k0 - kb.offset);
      if (!p.tb)
        CUPLAN_DIST_CUDA(cudaMemcpyAsync(slot + slot_b_offset_,
                                         static_cast<const char*>(b.data) + first * static_cast<std::size_t>(nj) * es,
                                         b_bytes, cudaMemcpyDeviceToDevice, side_));
      else
        CUPLAN_DIST_CUDA(cudaMemcpy2DAsync(slot + slot_b_offset_, w * es, static_cast<const char*>(b.data) + first * es,
                                           static_cast<std::size_t>(b.stored_cols) * es, w * es,
                                           static_cast<std::size_t>(nj), cudaMemcpyDeviceToDevice, side_));
      for (int r = 0; r < rows; ++r)
        if (r != row) sends.push_back({r * cols + col, slot_b_offset_, b_bytes});
    } else {
      recvs.push_back({panel.b_owner * cols + col, slot_b_offset_, b_bytes});
    }
    if (!sends.empty() || !recvs.empty()) dist::exchange(dist::state_of(comm_), rank_, slot, sends, slot, recvs, side_);
    CUPLAN_DIST_CUDA(cudaEventRecord(transfer_done_[q], side_));
    CUPLAN_DIST_CUDA(cudaStreamWaitEvent(s.native(), transfer_done_[q], 0));
    products_[q].execute({.stream = s, .after = {}, .release_workspace = o.release_workspace, .out = acc});
    CUPLAN_DIST_CUDA(cudaEventRecord(product_done_[q], s.native()));
  }
}

Tensor DistributedMatmulImpl::execute(const DistributedMatmulExecuteOptions& o) {
  check_live("execute");
  // Not planned here: plan() is collective and may block, and an execute only enqueues (docs/distributed.md).
  if (!planned_)
    throw StateError(
        "DistributedMatmul::execute: expected a planned object, got one without a plan; call plan() first (collective: "
        "every "
        "rank calls it)");
  if (!has_operands_)
    throw StateError("DistributedMatmul::execute: no operands (release_operand was called; reset_operand first)");
  const Shape shape = result_shape();
  if (o.out)
    dist::check_local_array(*o.out, "DistributedMatmul::execute", "out",
                            {.dtype = out_dtype_,
                             .shape = shape,
                             .role = fmt::format("rank {}'s local D", rank_),
                             .device = comm_.device(),
                             .writable = true});
  const StreamRef s = pick(o.stream);
  dist::DeviceGuard guard(comm_.device().index());
  if (gather_.prepared()) {
    // The all-gather's flags count executes: a captured graph would replay the counts of the execute it captured,
    // and its waits would pass on stale blocks.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CUPLAN_DIST_CUDA(cudaStreamIsCapturing(s.native(), &capture));
    if (capture != cudaStreamCaptureStatusNone)
      throw NotSupported(
          "DistributedMatmul::execute: expected a stream that is not capturing a CUDA graph, got one that is; the "
          "copy-engine all-gather counts executes in flags that a replayed graph would not advance (plan with "
          "exchange = ExchangeMethod::nccl to capture executes)");
  }
  phases_.begin(s, o.after);
  if (products_.empty()) make_products(s);
  Tensor result = o.out ? Tensor::wrap(*o.out) : Tensor::empty(shape, out_dtype_, comm_.device(), s);
  for (const TensorRef* t : {&a_, &b_}) t->record_stream(s);
  if (c_) c_->record_stream(s);
  if (bias_) bias_->record_stream(s);
  // The object's buffers are used on this stream (and on the side stream, joined back into it before the end): a
  // later free() returns them to the pool only after this work.
  for (const Tensor* t : {&a_native_, &b_native_, &d_native_, &partial_, &slots_[0], &slots_[1]})
    if (t->defined()) t->record_stream(s);
  const dist::AlgoPlan& plan = r_.plan;
  if (plan.move_a) move_a_.execute(a_.view().data(), a_native_.data(), a_native_.numel(), s.native());
  if (plan.move_b) move_b_.execute(b_.view().data(), b_native_.data(), b_native_.numel(), s.native());
  // Where the algorithm writes D: the result itself when D's layout is the algorithm's (SUMMA sums into its own
  // buffer), else the buffer redistributed into the result.
  const TensorView native_d = plan.move_d || plan.algo == dist::Algo::summa ? d_native_.view() : result.view();
  switch (plan.algo) {
    case dist::Algo::local:
      products_.front().execute({.stream = s, .after = {}, .release_workspace = o.release_workspace, .out = native_d});
      break;
    case dist::Algo::allgather:
      run_allgather(native_d, o, s);
      break;
    case dist::Algo::reduce_scatter:
      run_reduce_scatter(native_d, o, s);
      break;
    case dist::Algo::summa:
      run_summa(native_d, o, s);
      break;
  }
  if (plan.move_d) move_d_.execute(d_native_.data(), result.data(), result.numel(), s.native());
  // What the local products did not do: beta C (unless folded), the bias, the activation (unless folded without a
  // bias); SUMMA's sum also lands in the result here when it needs no redistribution.
  const bool add_c = has_c_ && !fold_;
  const bool act = activation_ != dist::Activation::none && (!fold_ || has_bias_);
  const bool summa_copy = plan.algo == dist::Algo::summa && !plan.move_d;
  if (add_c || has_bias_ || act || summa_copy) {
    const void* src = summa_copy ? d_native_.data() : result.data();
    CUPLAN_DIST_CUDA(dist::finish(result.data(), src, add_c ? c_->view().data() : nullptr, options_.beta,
                                  has_bias_ ? bias_->view().data() : nullptr,
                                  act ? activation_ : dist::Activation::none, shape[0], shape[1], out_dtype_,
                                  s.native()));
  }
  dist::state_of(comm_).watch_stream(s.native(), "DistributedMatmul::execute");  // with a timeout only
  phases_.end(s, comm_.device());
  return result;
}

}  // namespace cuplan::detail
