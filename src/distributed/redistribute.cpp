// SPDX-License-Identifier: Apache-2.0
// cuplan::Redistribute: one BoxExchange from the ranks' input boxes to their output boxes. The constructor checks
// what this rank can check alone; plan() gathers every rank's boxes, checks that both sets tile the global array
// (the same verdict on every rank), plans the copies and makes the buffers.
#include "cuplan/redistribute.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error_context.hpp"
#include "cuplan/errors.hpp"
#include "distributed/exchange/box_exchange.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/local_array.hpp"
#include "distributed/option_range.hpp"
#include "distributed/phase_order.hpp"
#include "plan/handle.hpp"
#include "plan/phase.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan {

namespace detail {

namespace {

using dist::shape_text;

std::string box_text(const DistributedBox& b) {
  return fmt::format("offset ({}) extent {}", fmt::join(b.offset, ", "),
                     b.extent.empty() ? std::string("()") : fmt::format("{}", fmt::join(b.extent, "x")));
}

// The box as the exchange layer holds it; `what` names it in the error when its axes do not match.
dist::Box to_box(const DistributedBox& b, int ndim, const char* what) {
  if (static_cast<int>(b.offset.size()) != ndim || static_cast<int>(b.extent.size()) != ndim)
    throw InvalidArgument(fmt::format("{}: expected {} offsets and {} extents (the global shape's axes), got {} and {}",
                                      what, ndim, ndim, b.offset.size(), b.extent.size()));
  dist::Box box;
  box.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (b.extent[i] < 0)
      throw InvalidArgument(fmt::format("{}: extent {} of axis {} is negative", what, b.extent[i], d));
    box.lo[i] = b.offset[i];
    box.n[i] = b.extent[i];
  }
  return box;
}

dist::AgreementValues box_values(const dist::Box& in, const dist::Box& out) {
  dist::AgreementValues v{};
  for (std::size_t d = 0; d < 3; ++d) {
    v[d] = in.lo[d];
    v[3 + d] = in.n[d];
    v[6 + d] = out.lo[d];
    v[9 + d] = out.n[d];
  }
  return v;
}

}  // namespace

class RedistributeImpl {
 public:
  RedistributeImpl(Communicator comm, Shape global_shape, const DistributedBox& in, const DistributedBox& out,
                   TensorRef operand, RedistributeOptions options)
      : comm_(std::move(comm)),
        shape_(std::move(global_shape)),
        operand_(std::move(operand)),
        options_(std::move(options)) {
    require_defined(operand_, "Redistribute", "local_operand");
    const int ndim = shape_.size();
    if (ndim < 1 || ndim > 3)
      throw InvalidArgument(fmt::format("global_shape: expected 1 to 3 dimensions, got {}", shape_text(shape_)));
    for (int d = 0; d < ndim; ++d)
      if (shape_[d] < 0) throw InvalidArgument(fmt::format("global_shape: negative extent in {}", shape_text(shape_)));
    dist::check_element_count(std::span(shape_.begin(), shape_.end()),
                              static_cast<std::int64_t>(operand_.view().dtype().size()), "global_shape");
    dist::check_enum(options_.exchange, ExchangeMethod::nccl, "exchange", "ExchangeMethod");
    in_ = to_box(in, ndim, "input_box");
    out_ = to_box(out, ndim, "output_box");
    in_public_ = in;
    out_public_ = out;
    dtype_ = operand_.view().dtype();
    check_operand(operand_.view());
    construction_stream_ = options_.stream;
    phases_.set_pending(options_.after);
  }

  void plan(std::optional<StreamRef> stream) {
    check_live("plan");
    const StreamRef s = pick(stream);
    dist::DeviceGuard guard(comm_.device().index());
    phases_.begin(s, {});
    plan_collective(s);
    phases_.end(s, comm_.device());
  }

  Tensor execute(const RedistributeExecuteOptions& o) {
    check_live("execute");
    // Not planned here: plan() is collective and may block, and an execute only enqueues (docs/distributed.md).
    if (!planned_)
      throw StateError(
          "Redistribute::execute: expected a planned object, got one without a plan; call plan() first (collective: "
          "every "
          "rank calls it)");
    if (!has_operand_)
      throw StateError("Redistribute::execute: no operand (release_operand was called; reset_operand first)");
    const Shape out_shape = out_public_.shape();
    if (o.out)
      dist::check_local_array(*o.out, "Redistribute::execute", "out",
                              {.dtype = dtype_,
                               .shape = out_shape,
                               .role = fmt::format("rank {}'s output box", comm_.rank()),
                               .device = comm_.device(),
                               .writable = true});
    const StreamRef s = pick(o.stream);
    dist::DeviceGuard guard(comm_.device().index());
    phases_.begin(s, o.after);
    Tensor result = o.out ? Tensor::wrap(*o.out) : Tensor::empty(out_shape, dtype_, comm_.device(), s);
    operand_.record_stream(s);
    exchange_.execute(operand_.view().data(), result.data(), out_.numel(), s.native());
    dist::state_of(comm_).watch_stream(s.native(), "Redistribute::execute");  // with a timeout only
    phases_.end(s, comm_.device());
    return result;
  }

  void reset_operand(TensorRef operand, std::optional<StreamRef> stream) {
    check_live("reset_operand");
    require_defined(operand, "Redistribute::reset_operand", "operand");
    check_operand(operand.view());
    const StreamRef s = pick(stream);
    dist::DeviceGuard guard(comm_.device().index());
    phases_.begin(s, {});
    operand_ = std::move(operand);
    has_operand_ = true;
    phases_.end(s, comm_.device());
  }

  void release_operand() {
    check_live("release_operand");
    operand_ = TensorRef();
    has_operand_ = false;
  }

  void free() noexcept {
    if (freed_) return;
    freed_ = true;
    try {
      exchange_.release();
      operand_ = TensorRef();
      phases_.reset();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cuplan: Redistribute::free: %s\n", e.what());
    }
  }

  DistributedBox input_box() const { return check_live("input_box"), in_public_; }
  DistributedBox output_box() const { return check_live("output_box"), out_public_; }
  ExchangeMethod exchange_method() const {
    check_live("exchange_method");
    return planned_ ? exchange_.method() : ExchangeMethod::automatic;
  }
  std::size_t device_memory_bytes() const {
    check_live("device_memory_bytes");
    return planned_ ? exchange_.device_bytes() : 0;
  }
  std::int64_t elements_sent() const {
    check_live("elements_sent");
    return planned_ ? exchange_.plan().moved_to_peers() : 0;
  }
  /// The object as a LibraryError's context names it (describe() and the device).
  std::string error_context() const { return describe() + ", on " + comm_.device().to_string(); }

  std::string describe() const {
    check_live("describe");
    std::size_t copies = 0;
    for (const auto& seg : exchange_.plan().sends) copies += seg.direct.size();
    const char* route = !planned_                                                    ? "route chosen in plan()"
                        : exchange_.route() == dist::BoxExchange::Route::nccl        ? "by NCCL"
                        : exchange_.route() == dist::BoxExchange::Route::copy_engine ? "by copy engine"
                                                                                     : "local copies";
    return fmt::format(
        "Redistribute {} global {} rank {}/{} in [{}] out [{}] {}, {} pieces to {} ranks, {} elements "
        "sent to peers, {:.1f} MiB held",
        dtype_.name(), shape_text(shape_), comm_.rank(), comm_.size(), box_text(in_public_), box_text(out_public_),
        route, copies, exchange_.plan().sends.size(), elements_sent(),
        static_cast<double>(device_memory_bytes()) / (1 << 20));
  }

 private:
  void check_live(const char* what) const {
    if (freed_) throw StateError(fmt::format("Redistribute::{}: the object was freed", what));
    dist::check_not_aborted(comm_, "Redistribute", what);  // dead once its communicator was aborted
  }
  StreamRef pick(const std::optional<StreamRef>& s) const {
    return resolve_stream(s ? s : construction_stream_, comm_.device().index());
  }
  void check_operand(const TensorView& op) const {
    dist::check_local_array(op, "Redistribute", "local_operand",
                            {.dtype = dtype_,
                             .shape = in_public_.shape(),
                             .role = fmt::format("rank {}'s input box: {}", comm_.rank(), box_text(in_public_)),
                             .device = comm_.device()});
  }

  void plan_collective(StreamRef s) {
    if (planned_) return;
    static constexpr std::string_view names[] = {"ndim",  "global_shape[0]", "global_shape[1]", "global_shape[2]",
                                                 "dtype", "exchange"};
    dist::AgreementValues v{};
    std::array<std::int64_t, 3> shape3{1, 1, 1};
    for (int d = 0; d < shape_.size(); ++d) shape3[static_cast<std::size_t>(d)] = shape_[d];
    v[0] = shape_.size();
    v[1] = shape3[0];
    v[2] = shape3[1];
    v[3] = shape3[2];
    v[4] = static_cast<std::int64_t>(dtype_.code());
    v[5] = static_cast<std::int64_t>(options_.exchange);
    exchange_.connect(dist::state_of(comm_), comm_.rank(), comm_.size(), comm_.device().index(), v, names,
                      "Redistribute::plan", options_.exchange, s.native());
    const std::vector<dist::AgreementValues> boxes = exchange_.gather(box_values(in_, out_), s.native());
    std::vector<dist::LocalArray> from, to;
    std::int64_t largest_out = 0;
    for (const dist::AgreementValues& b : boxes) {
      dist::Box i, o;
      i.ndim = o.ndim = shape_.size();
      for (std::size_t d = 0; d < 3; ++d) {
        i.lo[d] = b[d];
        i.n[d] = b[3 + d];
        o.lo[d] = b[6 + d];
        o.n[d] = b[9 + d];
      }
      from.push_back(dist::single_box(i));
      to.push_back(dist::single_box(o));
      largest_out = std::max(largest_out, o.numel());
    }
    for (const auto& [arrays, what] :
         {std::pair{&from, "Redistribute::plan: input boxes"}, std::pair{&to, "Redistribute::plan: output boxes"}}) {
      const std::string problem = dist::tiling_problem(*arrays, shape3, shape_.size(), what);
      if (!problem.empty()) throw InvalidArgument(problem);
    }
    exchange_.prepare(dist::plan_boxes(from, to, comm_.rank()), largest_out, dtype_.size(), "Redistribute::plan",
                      s.native());
    planned_ = true;
    if (comm_.rank() == 0 && comm_.size() > 1)
      log_message(LogLevel::info,
                  fmt::format("Redistribute: moves by {} over {} ranks{}", to_string(exchange_.method()), comm_.size(),
                              exchange_.why_not().empty() || options_.exchange == ExchangeMethod::nccl
                                  ? std::string()
                                  : fmt::format(" ({})", exchange_.why_not())));
  }

  Communicator comm_;
  Shape shape_;
  TensorRef operand_;
  RedistributeOptions options_;
  dist::Box in_, out_;
  DistributedBox in_public_, out_public_;
  DType dtype_;
  dist::BoxExchange exchange_;
  dist::PhaseOrder phases_;
  std::optional<StreamRef> construction_stream_;
  bool has_operand_ = true;
  bool planned_ = false;
  bool freed_ = false;
};

}  // namespace detail

inline namespace CUPLAN_ABI_NAMESPACE {

namespace {
std::int64_t checked_axis(const Shape& shape, int axis, const char* what) {
  if (axis < 0 || axis >= shape.size())
    throw InvalidArgument(
        fmt::format("{}: axis {} is not an axis of a {}-dimensional shape", what, axis, shape.size()));
  return shape[axis];
}
DistributedBox whole(const Shape& shape, const char* what) {
  for (int d = 0; d < shape.size(); ++d)
    if (shape[d] < 0)
      throw InvalidArgument(fmt::format("{}: global_shape: expected extents of 0 or more, got {} on axis {} of {}",
                                        what, shape[d], d, detail::dist::shape_text(shape)));
  DistributedBox b;
  b.offset.assign(static_cast<std::size_t>(shape.size()), 0);
  b.extent.assign(shape.begin(), shape.end());
  return b;
}
}  // namespace

DistributedBox slab_box(const Shape& global_shape, int axis, int parts, int rank) {
  const std::int64_t extent = checked_axis(global_shape, axis, "slab_box");
  if (parts < 1 || rank < 0 || rank >= parts)
    throw InvalidArgument(fmt::format("slab_box: expected 0 <= rank < parts, got rank {} of {}", rank, parts));
  DistributedBox box = whole(global_shape, "slab_box");
  const detail::dist::Block b = detail::dist::split(extent, parts, rank);
  box.offset[static_cast<std::size_t>(axis)] = b.offset;
  box.extent[static_cast<std::size_t>(axis)] = b.size;
  return box;
}

DistributedBox pencil_box(const Shape& global_shape, std::array<int, 2> axes, std::array<int, 2> grid, int rank) {
  if (axes[0] == axes[1])
    throw InvalidArgument(fmt::format("pencil_box: expected two different axes, got {} twice", axes[0]));
  if (grid[0] < 1 || grid[1] < 1)
    throw InvalidArgument(fmt::format("pencil_box: grid: expected positive extents, got {}x{}", grid[0], grid[1]));
  if (rank < 0 || rank >= std::int64_t{grid[0]} * grid[1])
    throw InvalidArgument(fmt::format("pencil_box: expected 0 <= rank < {}x{}, got rank {}", grid[0], grid[1], rank));
  DistributedBox box = whole(global_shape, "pencil_box");
  for (int k = 0; k < 2; ++k) {
    const std::int64_t extent = checked_axis(global_shape, axes[static_cast<std::size_t>(k)], "pencil_box");
    const detail::dist::Block b =
        detail::dist::split(extent, grid[static_cast<std::size_t>(k)], k == 0 ? rank / grid[1] : rank % grid[1]);
    box.offset[static_cast<std::size_t>(axes[static_cast<std::size_t>(k)])] = b.offset;
    box.extent[static_cast<std::size_t>(axes[static_cast<std::size_t>(k)])] = b.size;
  }
  return box;
}

DistributedBox root_box(const Shape& global_shape, int root, int rank) {
  if (global_shape.empty()) throw InvalidArgument("root_box: expected a shape of at least one axis");
  if (root < 0 || rank < 0)
    throw InvalidArgument(fmt::format("root_box: expected ranks of 0 or more, got root {} and rank {}", root, rank));
  DistributedBox box = whole(global_shape, "root_box");
  if (rank != root) box.extent[0] = 0;
  return box;
}

Redistribute::Redistribute(Communicator comm, Shape global_shape, DistributedBox input_box, DistributedBox output_box,
                           TensorRef local_operand, RedistributeOptions options)
    : impl_(std::make_unique<detail::RedistributeImpl>(std::move(comm), std::move(global_shape), input_box, output_box,
                                                       std::move(local_operand), std::move(options))) {}
Redistribute::Redistribute(Redistribute&&) noexcept = default;
Redistribute& Redistribute::operator=(Redistribute&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->free();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
Redistribute::~Redistribute() {
  if (impl_) impl_->free();
}

namespace {
constexpr const char* who = "Redistribute::";
}  // namespace

void Redistribute::plan(std::optional<StreamRef> stream) try {
  detail::held(impl_, who, "plan").plan(stream);
} catch (const LibraryError& error) {
  detail::rethrow_with_context(error, "Redistribute.plan", [this] { return impl_->error_context(); });
}
Tensor Redistribute::execute(RedistributeExecuteOptions options) try {
  return detail::held(impl_, who, "execute").execute(options);
} catch (const LibraryError& error) {
  detail::rethrow_with_context(error, "Redistribute.execute", [this] { return impl_->error_context(); });
}
void Redistribute::reset_operand(TensorRef operand, std::optional<StreamRef> stream) try {
  detail::held(impl_, who, "reset_operand").reset_operand(std::move(operand), stream);
} catch (const LibraryError& error) {
  detail::rethrow_with_context(error, "Redistribute.reset_operand", [this] { return impl_->error_context(); });
}
void Redistribute::release_operand() {
  detail::held(impl_, who, "release_operand").release_operand();
}
void Redistribute::free() noexcept {
  if (impl_) impl_->free();
}
DistributedBox Redistribute::input_box() const {
  return detail::held(impl_, who, "input_box").input_box();
}
DistributedBox Redistribute::output_box() const {
  return detail::held(impl_, who, "output_box").output_box();
}
ExchangeMethod Redistribute::exchange_method() const {
  return detail::held(impl_, who, "exchange_method").exchange_method();
}
std::size_t Redistribute::device_memory_bytes() const {
  return detail::held(impl_, who, "device_memory_bytes").device_memory_bytes();
}
std::int64_t Redistribute::elements_sent() const {
  return detail::held(impl_, who, "elements_sent").elements_sent();
}
std::string Redistribute::describe() const {
  return detail::held(impl_, who, "describe").describe();
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
