// SPDX-License-Identifier: Apache-2.0
#include "distributed/distributed_matmul_impl.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuplan/errors.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/collectives.hpp"
#include "plan/phase.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan::detail {

namespace {

using dist::shape_text;

std::string layout_text(const dist::MatrixSpec& s) {
  switch (s.dist) {
    case dist::Dist::row_blocks:
      return "row blocks";
    case dist::Dist::column_blocks:
      return "column blocks";
    case dist::Dist::grid:
      return fmt::format("{}x{} grid", s.rows, s.cols);
    case dist::Dist::block_cyclic:
      return fmt::format("{}x{} block-cyclic {}x{}", s.rows, s.cols, s.mb, s.nb);
  }
  return "?";
}

}  // namespace

TensorView LogicalMatrix::block(std::int64_t r0, std::int64_t h, std::int64_t c0, std::int64_t w) const {
  const std::size_t es = dtype.size();
  if (!transposed)
    return TensorView(static_cast<const char*>(data) + static_cast<std::size_t>(r0 * stored_cols + c0) * es, dtype,
                      Shape{h, w}, Strides{stored_cols, 1}, device, MemorySpace::device);
  return TensorView(static_cast<const char*>(data) + static_cast<std::size_t>(c0 * stored_cols + r0) * es, dtype,
                    Shape{h, w}, Strides{1, stored_cols}, device, MemorySpace::device);
}

DistributedMatmulImpl::DistributedMatmulImpl(Communicator comm, std::int64_t m, std::int64_t n, std::int64_t k,
                                             TensorRef a, TensorRef b, DistributedMatmulOptions options)
    : comm_(std::move(comm)), options_(std::move(options)), a_(std::move(a)), b_(std::move(b)) {
  require_defined(a_, "DistributedMatmul", "local_a");
  require_defined(b_, "DistributedMatmul", "local_b");
  require_defined(options_.c, "DistributedMatmul", "c");
  require_defined(options_.bias, "DistributedMatmul", "bias");
  rank_ = comm_.rank();
  size_ = comm_.size();
  r_ = resolve_product(rank_, size_, m, n, k, options_);
  in_dtype_ = a_.view().dtype();
  out_dtype_ = options_.result_dtype.value_or(in_dtype_);
  if (in_dtype_.is_fp8())
    throw NotSupported(
        fmt::format("local_a: a distributed product of {} operands (fp8 needs per-block scales; "
                    "f16, bf16, f32, f64, c64 and c128 are supported)",
                    in_dtype_.name()));
  if (!(in_dtype_ == f16 || in_dtype_ == bf16 || in_dtype_ == f32 || in_dtype_ == f64 || in_dtype_ == c64 ||
        in_dtype_ == c128))
    throw InvalidArgument(
        fmt::format("local_a: expected dtype f16, bf16, f32, f64, c64 or c128, got {}", in_dtype_.name()));
  if (!(out_dtype_ == f16 || out_dtype_ == bf16 || out_dtype_ == f32 || out_dtype_ == f64 || out_dtype_ == c64 ||
        out_dtype_ == c128))
    throw InvalidArgument(
        fmt::format("result_dtype: expected f16, bf16, f32, f64, c64 or c128, got {}", out_dtype_.name()));
  // Matmul's own rules for the local products, checked here so that every rank raises before any collective.
  const bool widen = (in_dtype_ == f16 || in_dtype_ == bf16) && out_dtype_ == f32;
  if (!(out_dtype_ == in_dtype_) && !widen)
    throw InvalidArgument(fmt::format("result_dtype: {} for {} operands; expected {}{}", out_dtype_.name(),
                                      in_dtype_.name(), in_dtype_.name(),
                                      in_dtype_ == f16 || in_dtype_ == bf16 ? " or f32" : ""));
  if (!in_dtype_.is_complex() && (options_.alpha.imag() != 0 || options_.beta.imag() != 0))
    throw InvalidArgument(fmt::format("alpha = ({}, {}) and beta = ({}, {}) must be real for {} operands",
                                      options_.alpha.real(), options_.alpha.imag(), options_.beta.real(),
                                      options_.beta.imag(), in_dtype_.name()));
  if (options_.beta != std::complex<double>(0.0) && !options_.c)
    throw InvalidArgument(fmt::format("beta = ({}, {}) needs operand c (this rank's local array of C); none given",
                                      options_.beta.real(), options_.beta.imag()));
  const Epilog e = options_.epilog;
  has_bias_ = bias_epilog(e);
  activation_ = e == Epilog::relu || e == Epilog::relu_bias   ? dist::Activation::relu
                : e == Epilog::gelu || e == Epilog::gelu_bias ? dist::Activation::gelu
                                                              : dist::Activation::none;
  if (out_dtype_.is_complex() && activation_ != dist::Activation::none)
    throw InvalidArgument(fmt::format("epilog: {} acts on real values; a {} product takes none or bias", to_string(e),
                                      out_dtype_.name()));
  if (has_bias_ && !options_.bias)
    throw InvalidArgument(fmt::format("bias: epilog {} needs a bias (one value per local row of D)", to_string(e)));
  check_operand(MatmulOperand::a, a_.view());
  check_operand(MatmulOperand::b, b_.view());
  if (options_.c) {
    check_operand(MatmulOperand::c, options_.c->view());
    c_ = options_.c;
  }
  if (options_.bias) {
    check_operand(MatmulOperand::bias, options_.bias->view());
    bias_ = options_.bias;
  }
  has_c_ = c_.has_value() && options_.beta != std::complex<double>(0.0);
  fold_ = (r_.plan.algo == dist::Algo::local || r_.plan.algo == dist::Algo::allgather) && !r_.plan.move_d;
  construction_stream_ = options_.stream;
  phases_.set_pending(options_.after);
}

void DistributedMatmulImpl::check_live(const char* what) const {
  if (freed_) throw StateError(fmt::format("DistributedMatmul::{}: the object was freed", what));
  dist::check_not_aborted(comm_, "DistributedMatmul", what);  // dead once its communicator was aborted
}

void DistributedMatmulImpl::check_operand(MatmulOperand which, const TensorView& v) const {
  const auto i = static_cast<std::size_t>(rank_);
  const char* name = which == MatmulOperand::a   ? "local_a"
                     : which == MatmulOperand::b ? "local_b"
                     : which == MatmulOperand::c ? "c"
                                                 : "bias";
  if (which == MatmulOperand::epilog_aux)
    throw InvalidArgument("reset_operand: a distributed product has no epilog_aux operand");
  const dist::LocalArray& array = which == MatmulOperand::a   ? r_.user.a[i]
                                  : which == MatmulOperand::b ? r_.user.b[i]
                                                              : r_.user.d[i];
  const Shape want = which == MatmulOperand::bias ? Shape{array.shape[0]} : Shape{array.shape[0], array.shape[1]};
  const DType dtype = which == MatmulOperand::a || which == MatmulOperand::b ? in_dtype_ : out_dtype_;
  dist::check_local_array(
      v, "DistributedMatmul", name,
      {.dtype = dtype,
       .shape = want,
       .role = fmt::format("rank {}'s local {}", rank_, which == MatmulOperand::bias ? "rows of D" : "array"),
       .device = comm_.device()});
}

StreamRef DistributedMatmulImpl::pick(const std::optional<StreamRef>& s) const {
  return resolve_stream(s ? s : construction_stream_, comm_.device().index());
}

void DistributedMatmulImpl::plan(std::optional<StreamRef> stream) {
  check_live("plan");
  if (!has_operands_) throw StateError("DistributedMatmul::plan: no operands (release_operand was called)");
  const StreamRef s = pick(stream);
  dist::DeviceGuard guard(comm_.device().index());
  phases_.begin(s, {});
  plan_collective(s);
  phases_.end(s, comm_.device());
}

void DistributedMatmulImpl::autotune(const AutotuneOptions& options) {
  check_live("autotune");
  if (!has_operands_) throw StateError("DistributedMatmul::autotune: no operands (release_operand was called)");
  const StreamRef s = pick(options.stream);
  dist::DeviceGuard guard(comm_.device().index());
  phases_.begin(s, {});
  plan_collective(s);
  if (products_.empty()) make_products(s);
  // Every product is timed on its own inputs (for the all-gather steps after the first and for SUMMA's panels, the
  // slots, whatever they hold: the time does not depend on the values).
  for (Matmul& product : products_) {
    AutotuneOptions o = options;
    o.stream = s;
    product.autotune(o);
  }
  phases_.end(s, comm_.device());
}

void DistributedMatmulImpl::connect_route(StreamRef s) {
  // What every rank must plan alike; a rank that differs would post other transfers and hang its peers.
  static constexpr std::string_view names[] = {"m",
                                               "n",
                                               "k",
                                               "transposes (a + 2 b)",
                                               "dtypes (a + 256 d)",
                                               "epilog",
                                               "compute",
                                               "algorithm",
                                               "exchange",
                                               "layout_a (distribution + 4 rows + 262144 cols)",
                                               "layout_a block (mb * 2^31 + nb)",
                                               "layout_b (distribution + 4 rows + 262144 cols)",
                                               "layout_b block (mb * 2^31 + nb)",
                                               "layout_d (distribution + 4 rows + 262144 cols)",
                                               "layout_d block (mb * 2^31 + nb)",
                                               "c, bias, min_panels (c + 2 bias + 4 min_panels)"};
  const dist::Problem& p = r_.problem;
  auto layout = [](const dist::MatrixSpec& spec) {
    return static_cast<std::int64_t>(spec.dist) + 4 * spec.rows + 262144LL * spec.cols;
  };
  dist::AgreementValues v{};
  v[0] = p.m;
  v[1] = p.n;
  v[2] = p.k;
  v[3] = (p.ta ? 1 : 0) + (p.tb ? 2 : 0);
  v[4] = static_cast<std::int64_t>(in_dtype_.code()) + 256 * static_cast<std::int64_t>(out_dtype_.code());
  v[5] = static_cast<std::int64_t>(options_.epilog);
  v[6] = static_cast<std::int64_t>(options_.compute);
  v[7] = static_cast<std::int64_t>(options_.algorithm);
  v[8] = static_cast<std::int64_t>(options_.exchange);
  v[9] = layout(p.a);
  v[10] = (p.a.mb << 31) + p.a.nb;
  v[11] = layout(p.b);
  v[12] = (p.b.mb << 31) + p.b.nb;
  v[13] = layout(p.d);
  v[14] = (p.d.mb << 31) + p.d.nb;
  v[15] = (c_ ? 1 : 0) + (bias_ ? 2 : 0) + 4 * options_.min_panels;
  const char* what = "DistributedMatmul::plan";
  table_.agree(dist::state_of(comm_), rank_, size_, comm_.device().index(), v, names, what, s.native());
  const auto i = static_cast<std::size_t>(rank_);
  auto largest = [](const std::vector<dist::LocalArray>& arrays) {
    std::int64_t n = 0;
    for (const dist::LocalArray& a : arrays) n = std::max(n, a.numel());
    return n;
  };
  auto connect = [&](dist::BoxExchange& ex, const std::vector<dist::LocalArray>& from,
                     const std::vector<dist::LocalArray>& to, DType dtype) {
    ex.connect(dist::state_of(comm_), rank_, size_, comm_.device().index(), v, names, what, options_.exchange,
               s.native());
    ex.prepare(dist::plan_boxes(from, to, rank_), largest(to), dtype.size(), what, s.native());
  };
  const dist::AlgoPlan& plan = r_.plan;
  if (plan.move_a) {
    connect(move_a_, r_.user.a, r_.native.a, in_dtype_);
    a_native_ = Tensor::empty({r_.native.a[i].shape[0], r_.native.a[i].shape[1]}, in_dtype_, comm_.device(), s);
  }
  if (plan.move_b) {
    connect(move_b_, r_.user.b, r_.native.b, in_dtype_);
    b_native_ = Tensor::empty({r_.native.b[i].shape[0], r_.native.b[i].shape[1]}, in_dtype_, comm_.device(), s);
  }
  if (plan.move_d) connect(move_d_, r_.native.d, r_.user.d, out_dtype_);
  if (plan.move_d || plan.algo == dist::Algo::summa)
    d_native_ = Tensor::empty({r_.native.d[i].shape[0], r_.native.d[i].shape[1]}, out_dtype_, comm_.device(), s);
}

void DistributedMatmulImpl::plan_collective(StreamRef s) {
  if (planned_) return;
  if (size_ > 1) connect_route(s);
  const dist::Problem& p = r_.problem;
  const auto& native = r_.native;
  const auto i = static_cast<std::size_t>(rank_);
  const std::size_t es = in_dtype_.size();
  // The algorithm's own buffers.
  if (r_.plan.algo == dist::Algo::allgather) {
    // Inside a node the owners push their blocks by copy engine (no SM taken from the products); else NCCL passes
    // them around the ring through two slots.
    const bool reachable = size_ > 1 && table_.all_reachable();
    if (options_.exchange == ExchangeMethod::copy_engine && size_ > 1 && !reachable)
      throw InvalidArgument(fmt::format(
          "DistributedMatmul::plan: exchange: copy_engine needs every rank to address every other rank's memory, "
          "but {}; use ExchangeMethod::nccl or automatic",
          table_.why_not()));
    if (reachable && options_.exchange != ExchangeMethod::nccl) {
      std::vector<std::size_t> block_bytes;
      for (int q = 0; q < size_; ++q)
        block_bytes.push_back(static_cast<std::size_t>(dist::split(p.m, size_, q).size * p.k) * es);
      gather_.prepare(dist::state_of(comm_), table_, rank_, size_, comm_.device().index(), block_bytes,
                      "DistributedMatmul::plan", s.native());
    } else {
      std::int64_t largest = 0;
      for (int q = 0; q < size_; ++q) largest = std::max(largest, dist::split(p.m, size_, q).size * p.k);
      for (Tensor& slot : slots_) slot = Tensor::empty({largest}, in_dtype_, comm_.device(), s);
    }
  } else if (r_.plan.algo == dist::Algo::reduce_scatter) {
    // Each row block at a 256-byte aligned offset: the local products write aligned D.
    std::size_t bytes = 0;
    partial_offsets_.clear();
    for (int j = 0; j < size_; ++j) {
      partial_offsets_.push_back(bytes);
      bytes += (static_cast<std::size_t>(dist::split(p.m, size_, j).size * p.n) * out_dtype_.size() + 255) / 256 * 256;
    }
    partial_ = Tensor::empty({static_cast<std::int64_t>(bytes)}, i8, comm_.device(), s);
  } else if (r_.plan.algo == dist::Algo::summa) {
    panels_ = dist::summa_panels(p.k, r_.plan.grid_rows, r_.plan.grid_cols,
                                 options_.min_panels > 0 ? options_.min_panels : 8);
    std::int64_t widest = 0;
    for (const dist::Panel& panel : panels_) widest = std::max(widest, panel.width);
    const std::int64_t rows = native.d[i].shape[0], cols = native.d[i].shape[1];
    slot_b_offset_ = (static_cast<std::size_t>(rows * widest) * es + 255) / 256 * 256;
    const auto bytes = static_cast<std::int64_t>(slot_b_offset_ + static_cast<std::size_t>(widest * cols) * es);
    for (Tensor& slot : slots_) slot = Tensor::empty({bytes}, i8, comm_.device(), s);
  }
  if (size_ > 1 && r_.plan.algo != dist::Algo::local && side_ == nullptr) {
    CUPLAN_DIST_CUDA(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  if (size_ > 1) {
    warm_up(s);
    // Planning the local products (cuBLASLt heuristics, module loads) waits for an idle device; the transfers above
    // are done, so no rank's plan waits on a peer's.
    dist::PeerWait wait(dist::state_of(comm_), "DistributedMatmul::plan",
                        "the transfers of plan() before the local products are planned");
    wait.synchronize(s.native());
  }
  make_products(s);
  {
    // Every kernel an execute launches is loaded now, on one rank too: a first launch loads its module, and loading
    // waits for the device to go idle, so an execute behind the caller's queued work would block (see finish.hpp).
    // Each local product runs once into scratch, and the elementwise pass is loaded.
    std::int64_t largest = 0;
    for (const Matmul& product : products_) {
      std::int64_t elements = 1;
      for (std::int64_t e : product.result_shape()) elements *= e;
      largest = std::max(largest, elements);
    }
    const Tensor scratch = Tensor::empty({largest}, out_dtype_, comm_.device(), s);
    for (Matmul& product : products_)
      (void)product.execute({.stream = s,
                             .after = {},
                             .release_workspace = false,
                             .out = TensorView(scratch.data(), out_dtype_, product.result_shape(),
                                               product.result_strides(), comm_.device(), MemorySpace::device)});
    CUPLAN_DIST_CUDA(dist::load_finish_kernels(out_dtype_));
    CUPLAN_DIST_CUDA(cudaStreamSynchronize(s.native()));  // local work only: the products into scratch
  }
  if (size_ > 1) {
    dist::PeerWait wait(dist::state_of(comm_), "DistributedMatmul::plan",
                        "the final barrier (every rank's plan() reaching its end)");
    table_.barrier(s.native());  // no rank leaves plan() before every rank has planned (as DistributedFFT)
    wait.synchronize(s.native());
  }
  planned_ = true;
  if (rank_ == 0) log_message(LogLevel::info, fmt::format("DistributedMatmul: {}", describe()));
}

void DistributedMatmulImpl::warm_up(StreamRef s) {
  // NCCL connects two ranks at their first message and blocks the host until the device is idle while doing so;
  // one byte along every path the algorithm uses makes those connections here, so that execute only enqueues.
  std::vector<int> to, from, roots;
  const dist::AlgoPlan& plan = r_.plan;
  if (plan.algo == dist::Algo::allgather && !gather_.prepared()) {
    to.push_back((rank_ + 1) % size_);
    from.push_back((rank_ - 1 + size_) % size_);
  } else if (plan.algo == dist::Algo::summa) {
    const int row = rank_ / plan.grid_cols, col = rank_ % plan.grid_cols;
    for (int c = 0; c < plan.grid_cols; ++c)
      if (c != col) {
        to.push_back(row * plan.grid_cols + c);
        from.push_back(row * plan.grid_cols + c);
      }
    for (int r = 0; r < plan.grid_rows; ++r)
      if (r != row) {
        to.push_back(r * plan.grid_cols + col);
        from.push_back(r * plan.grid_cols + col);
      }
  } else if (plan.algo == dist::Algo::reduce_scatter) {
    for (int q = 0; q < size_; ++q) roots.push_back(q);
  }
  const char* what = "DistributedMatmul::plan";
  if (!to.empty() || !from.empty()) dist::connect_peers(dist::state_of(comm_), what, rank_, to, from, s.native());
  if (!roots.empty()) dist::connect_reductions(dist::state_of(comm_), what, roots, out_dtype_, s.native());
}

void DistributedMatmulImpl::reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream) {
  check_live("reset_operand");
  require_defined(operand, "DistributedMatmul::reset_operand", "operand");
  check_operand(which, operand.view());
  const StreamRef s = pick(stream);
  dist::DeviceGuard guard(comm_.device().index());
  phases_.begin(s, {});
  if (which == MatmulOperand::a) {
    a_ = std::move(operand);
    a_set_ = true;
  }
  if (which == MatmulOperand::b) {
    b_ = std::move(operand);
    b_set_ = true;
  }
  if (which == MatmulOperand::c) {
    if (!c_) throw InvalidArgument("reset_operand: c was not given to the constructor");
    c_ = std::move(operand);
    c_set_ = true;
  }
  if (which == MatmulOperand::bias) {
    if (!bias_) throw InvalidArgument("reset_operand: bias was not given to the constructor");
    bias_ = std::move(operand);
    bias_set_ = true;
  }
  has_operands_ = a_set_ && b_set_ && (!c_ || c_set_) && (!bias_ || bias_set_);
  // The local products read the operands through views made in plan(); they are made again over the new ones.
  if (planned_ && has_operands_) {
    products_.clear();
    make_products(s);
  }
  phases_.end(s, comm_.device());
}

void DistributedMatmulImpl::release_operand() {
  check_live("release_operand");
  products_.clear();
  a_ = TensorRef();
  b_ = TensorRef();
  if (c_) c_ = TensorRef();
  if (bias_) bias_ = TensorRef();
  has_operands_ = a_set_ = b_set_ = c_set_ = bias_set_ = false;
}

void DistributedMatmulImpl::ensure_events(std::size_t count) {
  while (transfer_done_.size() < count) {
    cudaEvent_t a = nullptr, b = nullptr;
    CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&a, cudaEventDisableTiming));
    transfer_done_.push_back(a);
    CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&b, cudaEventDisableTiming));
    product_done_.push_back(b);
  }
}

void DistributedMatmulImpl::release_resources() noexcept {
  for (cudaEvent_t e : transfer_done_) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(e));
  for (cudaEvent_t e : product_done_) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(e));
  transfer_done_.clear();
  product_done_.clear();
  for (cudaEvent_t* e : {&fork_, &join_}) {
    if (*e != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(*e));
    *e = nullptr;
  }
  if (side_ != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaStreamDestroy(side_));
  side_ = nullptr;
  move_a_.release();
  move_b_.release();
  move_d_.release();
  gather_.release();
  table_.release();
}

void DistributedMatmulImpl::free() noexcept {
  if (freed_) return;
  freed_ = true;
  try {
    products_.clear();
    for (Tensor& t : slots_) t = Tensor();
    a_native_ = b_native_ = d_native_ = partial_ = stage_ = Tensor();
    release_resources();
    a_ = b_ = TensorRef();
    c_.reset();
    bias_.reset();
    phases_.reset();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuplan: DistributedMatmul::free: %s\n", e.what());
  }
}

DistributedMatmulBlocks DistributedMatmulImpl::local_blocks() const {
  check_live("local_blocks");
  return blocks_of(r_, rank_);
}

DistributedMatmulAlgorithm DistributedMatmulImpl::algorithm() const {
  check_live("algorithm");
  return to_public(r_.plan.algo);
}

Shape DistributedMatmulImpl::result_shape() const {
  const auto& d = r_.user.d[static_cast<std::size_t>(rank_)];
  return Shape{d.shape[0], d.shape[1]};
}

ExchangeMethod DistributedMatmulImpl::exchange_method() const {
  check_live("exchange_method");
  if (planned_ && r_.plan.algo == dist::Algo::allgather && size_ > 1)
    return gather_.prepared() ? ExchangeMethod::copy_engine : ExchangeMethod::nccl;
  for (const dist::BoxExchange* ex : {&move_a_, &move_b_, &move_d_})
    if (planned_ && ex->route() != dist::BoxExchange::Route::local) return ex->method();
  return ExchangeMethod::automatic;
}

std::size_t DistributedMatmulImpl::device_memory_bytes() const {
  check_live("device_memory_bytes");
  if (!planned_) return 0;
  std::size_t bytes = move_a_.device_bytes() + move_b_.device_bytes() + move_d_.device_bytes() + gather_.device_bytes();
  for (const Tensor* t : {&a_native_, &b_native_, &d_native_, &partial_, &stage_, &slots_[0], &slots_[1]})
    if (t->defined()) bytes += static_cast<std::size_t>(t->numel()) * t->dtype().size();
  return bytes;
}

std::string DistributedMatmulImpl::error_context() const {
  return describe() + ", on " + comm_.device().to_string();
}

std::string DistributedMatmulImpl::describe() const {
  check_live("describe");
  const dist::Problem& p = r_.problem;
  const dist::AlgoPlan& plan = r_.plan;
  std::string moves;
  for (auto [moved, name] : {std::pair{plan.move_a, "A"}, std::pair{plan.move_b, "B"}, std::pair{plan.move_d, "D"}})
    if (moved) moves += fmt::format("{}{}", moves.empty() ? "" : ", ", name);
  std::string algo = dist::algo_name(plan.algo);
  if (plan.algo == dist::Algo::allgather && size_ > 1 && planned_)
    algo += gather_.prepared() ? " (blocks pushed by copy engine)" : " (NCCL ring)";
  if (plan.algo == dist::Algo::summa)
    algo += fmt::format(" on a {}x{} grid, {} K panels", plan.grid_rows, plan.grid_cols,
                        panels_.empty() ? std::string("planned") : std::to_string(panels_.size()));
  return fmt::format(
      "DistributedMatmul {}x{}x{} {}{}{} -> {} rank {}/{}: {}; A {}, B {}, D {}; {}; epilog {}{}; {:.1f} MiB held", p.m,
      p.n, p.k, in_dtype_.name(), p.ta ? " A^T" : "", p.tb ? " B^T" : "", out_dtype_.name(), rank_, size_, algo,
      layout_text(p.a), layout_text(p.b), layout_text(p.d),
      moves.empty() ? std::string("no redistribution") : fmt::format("redistributes {}", moves),
      to_string(options_.epilog), has_c_ ? " with beta C" : "", static_cast<double>(device_memory_bytes()) / (1 << 20));
}

}  // namespace cuplan::detail
