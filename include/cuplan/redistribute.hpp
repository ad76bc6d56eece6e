// SPDX-License-Identifier: Apache-2.0
#pragma once
// Redistribute (docs/distributed.md, "Redistribute"): moves a distributed array of up to three dimensions from one
// set of per-rank boxes to another (a transpose of the decomposition, slab to pencil, a gather to one rank, a
// scatter from it) on the exchange layer of the distributed FFT: copy engines where every rank can address every
// other's memory, NCCL elsewhere. Same phases and stream contract as every cuplan object. Part of the optional
// component cuplan::distributed.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cuplan/distributed.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// Options of a Redistribute; every rank passes the same.
struct RedistributeOptions {
  /// How the data moves (see ExchangeMethod); resolved in plan(), the same on every rank.
  ExchangeMethod exchange = ExchangeMethod::automatic;
  std::optional<StreamRef> stream{};  ///< stream of every phase when the phase names none (current stream if empty)
  EventList after{};                  ///< events the first phase waits for
};

/// Options of one Redistribute::execute.
struct RedistributeExecuteOptions {
  std::optional<StreamRef> stream{};  ///< stream of this call; empty: RedistributeOptions::stream, else current
  EventList after{};                  ///< events this call's work waits for
  /// Write the result here instead of allocating it: contiguous, the operand's dtype, the output box's extents, in
  /// device memory of the communicator's device.
  std::optional<TensorView> out{};
};

/// Rank `rank`'s box when axis `axis` of `global_shape` is cut into `parts` consecutive blocks (the first
/// extent % parts blocks one element longer), the slab rule of DistributedFFT.
CUPLAN_API DistributedBox slab_box(const Shape& global_shape, int axis, int parts, int rank);
/// Rank `rank`'s box (rank = row * grid[1] + col) when axes `axes[0]` and `axes[1]` are cut over a grid[0] x
/// grid[1] process grid, the pencil rule of DistributedFFT.
CUPLAN_API DistributedBox pencil_box(const Shape& global_shape, std::array<int, 2> axes, std::array<int, 2> grid,
                                     int rank);
/// The whole array on rank `root`, an empty box (extent 0 on axis 0) elsewhere: the output box of a gather, the
/// input box of a scatter.
CUPLAN_API DistributedBox root_box(const Shape& global_shape, int root, int rank);

}  // namespace CUPLAN_ABI_NAMESPACE
namespace detail {
class RedistributeImpl;
}
inline namespace CUPLAN_ABI_NAMESPACE {

/// One rank's part of a redistribution. Move-only. Every rank of the communicator constructs one with the same
/// global shape, dtype and options and its own input and output boxes; the ranks' input boxes, and their output
/// boxes, must each hold every element of the global array exactly once (empty boxes allowed). plan() checks that
/// collectively: a rank whose shape, dtype or options differ, or boxes that overlap or leave a gap, raise
/// InvalidArgument on every rank. Phases are collective; every rank calls them in the same order.
class CUPLAN_API Redistribute {
 public:
  /// `local_operand` holds this rank's input box: contiguous, row-major, in device memory of the communicator's
  /// device, of any dtype. Validates this rank's arguments; no GPU work and no communication.
  Redistribute(Communicator comm, Shape global_shape, DistributedBox input_box, DistributedBox output_box,
               TensorRef local_operand, RedistributeOptions options = {});
  /// Takes over the plan; the moved-from object's calls throw StateError.
  Redistribute(Redistribute&&) noexcept;
  /// Releases this object's plan and takes over the other's.
  Redistribute& operator=(Redistribute&&) noexcept;
  Redistribute(const Redistribute&) = delete;
  Redistribute& operator=(const Redistribute&) = delete;
  ~Redistribute();

  /// Collective, blocking: checks agreement and the boxes, chooses the route, plans every copy and makes the
  /// exchange buffers (on `stream`, else the options' stream, else the current one).
  void plan(std::optional<StreamRef> stream = {});
  /// Collective: enqueues the move and returns this rank's output box as a new tensor (or `out`). Never blocks the
  /// host for device operands. StateError before plan() (an execute never plans: planning is collective and may
  /// block).
  Tensor execute(RedistributeExecuteOptions options = {});
  /// Replaces the operand by one of the same shape and dtype on the same device, ordered after the last phase.
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream = {});
  /// Drops the object's reference to the operand (execute needs reset_operand first).
  void release_operand();
  /// Releases buffers and streams; every later call throws StateError. Never throws.
  void free() noexcept;

  DistributedBox input_box() const;   ///< this rank's box of the operand
  DistributedBox output_box() const;  ///< this rank's box of the result
  /// copy_engine or nccl once planned (the same on every rank); automatic before.
  ExchangeMethod exchange_method() const;
  /// Device memory held between executes (receive or packed buffers), in bytes; 0 before plan().
  std::size_t device_memory_bytes() const;
  /// Elements this rank sends to other ranks per execute (0 before plan()).
  std::int64_t elements_sent() const;
  /// One line: dtype, global shape, rank, boxes, route, pieces.
  std::string describe() const;

 private:
  std::unique_ptr<detail::RedistributeImpl> impl_;
};

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
