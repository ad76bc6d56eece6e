// SPDX-License-Identifier: Apache-2.0
#pragma once
// Distributed FFT over NCCL (docs/distributed.md): the optional component cuplan::distributed. One DistributedFFT
// per rank transforms a global 2D or 3D array of which each rank holds one box, with the plan/execute phases and the
// stream contract of FFT. Not included by cuplan/cuplan.hpp: the core library does not need NCCL. This header does
// not include nccl.h either; pass an ncclComm_t (a `ncclComm*`) where you already have one.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cuplan/device.hpp"
#include "cuplan/enum_name.hpp"
#include "cuplan/export.hpp"
#include "cuplan/fft.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

struct ncclComm;  // NCCL's communicator (ncclComm_t is ncclComm*)

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
class Communicator;
}
namespace detail {
/// True for MPI's communicator type, once cuplan/distributed_mpi.hpp is included (it enables Communicator's
/// constructor from an MPI communicator).
template <class T>
inline constexpr bool is_mpi_comm_v = false;
/// Defined for MPI_Comm in cuplan/distributed_mpi.hpp.
template <class MpiComm>
Communicator join_mpi(MpiComm comm, Device device);
/// cuplan's own access to a Communicator's shared state.
struct CommunicatorAccess;
}  // namespace detail
inline namespace CUPLAN_ABI_NAMESPACE {

/// A NCCL communicator bound to one device. Copies share it; an owning one is destroyed with the last copy.
class CUPLAN_API Communicator {
 public:
  /// Bytes of a NCCL unique id (NCCL_UNIQUE_ID_BYTES).
  static constexpr std::size_t unique_id_bytes = 128;
  /// A NCCL unique id (the bytes of an ncclUniqueId), which names a communicator to the ranks that join it.
  using UniqueId = std::array<char, unique_id_bytes>;

  /// Wraps a communicator the caller owns (and destroys after every user is gone); rank, size and device are read
  /// from it.
  explicit Communicator(ncclComm* comm);
  /// A new unique id (ncclGetUniqueId): made by one rank and given to all (MPI_Bcast, a file, shared memory).
  static UniqueId unique_id();
  /// Joins the communicator of `size` ranks named by `id` as `rank` on `device` (ncclCommInitRank). Collective:
  /// every rank calls it at the same time, from its own process or thread.
  static Communicator from_unique_id(const UniqueId& id, int rank, int size, Device device);
  /// One communicator per device for a single process that drives all of them (ncclCommInitAll); rank i uses
  /// devices[i]. InvalidArgument for no device or a device named twice.
  static std::vector<Communicator> local_all(std::span<const int> devices);
  /// Joins a communicator over the processes of the MPI communicator `comm`, with the same rank and size, on
  /// `device` (one process per GPU, as under mpirun). Collective over `comm`. Declared for MPI's communicator type
  /// only in code that includes cuplan/distributed_mpi.hpp, which also has cuplan::mpi::communicator(comm), with
  /// the device chosen from the node-local rank.
  template <class MpiComm>
  requires detail::is_mpi_comm_v<MpiComm> Communicator(MpiComm comm, Device device)
      : Communicator(detail::join_mpi<MpiComm>(comm, device)) {}

  /// This member's rank, 0 <= rank() < size().
  int rank() const;
  /// Number of ranks.
  int size() const;
  /// The CUDA device this member runs on.
  Device device() const;
  /// The NCCL communicator (an ncclComm_t). StateError (TimeoutError after a timeout) once it was aborted.
  ncclComm* native() const;
  /// True when this object destroys the communicator (from_unique_id, local_all).
  bool owning() const;

  /// How long a distributed operation over this communicator waits for its peers before it gives up: a wait in
  /// plan() (the gathers, connections and the final barrier) and the work of each execute(). On expiry the
  /// communicator is aborted (ncclCommAbort) and the operation raises TimeoutError, naming the rank, the operation,
  /// the timeout and what it waited for (docs/distributed.md, "Timeouts"). 0, the default unless
  /// CUPLAN_DISTRIBUTED_TIMEOUT_MS says otherwise, waits forever. Shared by every copy of this Communicator; a
  /// change applies to the waits that start after it. InvalidArgument for a negative value.
  void set_timeout(std::chrono::milliseconds timeout);
  /// The timeout set (0: none).
  std::chrono::milliseconds timeout() const;
  /// Aborts the communicator (ncclCommAbort): NCCL work of this rank that waits on peers ends, and every later
  /// call of an object over this communicator raises StateError (TimeoutError after a timeout). For a wrapped
  /// ncclComm_t, the caller must not destroy it afterwards: the abort freed it. Idempotent; never throws.
  void abort() noexcept;
  /// True once the communicator was aborted, by abort(), a timeout or an asynchronous NCCL error.
  bool aborted() const noexcept;
  /// Why it was aborted (empty while it is not).
  std::string abort_reason() const;

  struct State;  ///< opaque: the shared NCCL communicator

 private:
  friend struct detail::CommunicatorAccess;
  explicit Communicator(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

/// How the global array is cut over the ranks. `slab`: along one axis (2D and 3D); `pencil`: along two axes over
/// a rows x cols process grid (3D); `automatic`: slab when the first two axes have at least as many elements as
/// there are ranks, else the most square pencil grid that fits.
enum class Decomposition { automatic, slab, pencil };
/// Where the operand comes from: `natural` (each rank holds its input_box(), cut along axis 0, or axes 0 and 1 for
/// a pencil), or `transposed`, the layout a ResultLayout::optimized forward transform leaves (C2C and C2R only: the
/// first exchanges are skipped).
enum class InputLayout { natural, transposed };

/// How the exchanges move data between ranks (docs/distributed.md, "Copy engines or NCCL").
///  - `automatic`: copy engines when every rank can address every other rank's memory (one process with peer
///    access between its GPUs, or processes on one host through CUDA IPC), else NCCL;
///  - `copy_engine`: copy engines, from the local FFT's output straight into the peer's next-stage buffer, with no
///    pack kernel; plan() raises InvalidArgument on every rank when a pair of ranks cannot address each other;
///  - `nccl`: NCCL's grouped send and receive (any ranks NCCL connects, across hosts too).
enum class ExchangeMethod { automatic, copy_engine, nccl };

/// "automatic", "copy_engine" or "nccl".
constexpr std::string_view to_string(ExchangeMethod method) noexcept {
  return detail::enum_name<ExchangeMethod::nccl>(method, {"automatic", "copy_engine", "nccl"});
}

/// "automatic", "slab" or "pencil".
constexpr std::string_view to_string(Decomposition decomposition) noexcept {
  return detail::enum_name<Decomposition::pencil>(decomposition, {"automatic", "slab", "pencil"});
}
/// "natural" or "transposed".
constexpr std::string_view to_string(InputLayout layout) noexcept {
  return detail::enum_name<InputLayout::transposed>(layout, {"natural", "transposed"});
}

/// A box of the global array: offsets and extents per axis (ndim entries).
struct CUPLAN_API DistributedBox {
  std::vector<std::int64_t> offset{};  ///< index of the box's first element in the global array, per axis
  std::vector<std::int64_t> extent{};  ///< length of the box per axis
  /// Number of elements (product of the extents).
  std::int64_t numel() const;
  /// The extents as a Shape (the shape of the local tensor).
  Shape shape() const;
  /// Same offsets and extents.
  friend bool operator==(const DistributedBox&, const DistributedBox&) = default;
};

/// Where one rank's data lies before and after the transform, and the decomposition chosen.
struct DistributedBoxes {
  DistributedBox input{};                             ///< this rank's box of the operand
  DistributedBox output{};                            ///< this rank's box of the result
  Decomposition decomposition = Decomposition::slab;  ///< slab or pencil, as resolved
  std::array<int, 2> process_grid{1, 1};              ///< rows x cols (slab: size x 1)
};

/// Options of a DistributedFFT; every rank passes the same.
struct DistributedFFTOptions {
  /// How the global array is cut over the ranks (see Decomposition).
  Decomposition decomposition = Decomposition::automatic;
  /// rows x cols, rows * cols = communicator size (pencil; a slab takes {size, 1}). Empty: chosen.
  std::optional<std::array<int, 2>> process_grid{};
  /// Empty: C2C for a complex operand, R2C for a real one. C2R needs it.
  std::optional<FFTType> fft_type{};
  /// `optimized` leaves the result in the transposed layout of the last stage and skips the exchanges back
  /// (output_box() says where); not for C2R, whose result is real and always natural.
  ResultLayout result_layout = ResultLayout::natural;
  /// Layout of the operand (see InputLayout).
  InputLayout input_layout = InputLayout::natural;
  /// Scaling of the result, as FFTOptions::normalization (N is the product of the global lengths).
  Normalization normalization = Normalization::none;
  std::optional<StreamRef> stream{};  ///< stream of the constructor's ordering (current stream if empty)
  EventList after{};                  ///< events the first phase waits for
  /// How the exchanges move data (see ExchangeMethod); resolved in plan(), the same on every rank.
  ExchangeMethod exchange = ExchangeMethod::automatic;
  /// Copy-engine exchanges: the local FFT before an exchange runs in this many pieces along axis 0, and each
  /// piece's exchange overlaps the next piece's transform. 0: chosen (4); 1: no overlap. At most the rank's
  /// extent along axis 0.
  int chunks = 0;
  /// Fields of the same global shape transformed by one execute (the three components of a velocity, or a batch):
  /// with more than one, the operand and the result carry a leading axis of this length, field f being
  /// operand[f] and result[f]; the fields run one after another through the same buffers. At least 1.
  int fields = 1;
  /// C2C only: the result overwrites the operand, and the local FFTs before each exchange transform in place, so
  /// that a rank holds its operand, one receive buffer and the FFT workspaces (docs/distributed.md, "Memory").
  /// execute() then takes no `out` and returns the operand's memory seen with output_box()'s shape. Every rank's
  /// output box must fit in its input box (InvalidArgument on every rank in the constructor otherwise).
  bool inplace = false;
  /// Prolog and epilog callbacks (FFTOptions::prolog, FFTOptions::epilog) are not supported by DistributedFFT yet: a
  /// non-empty one is refused with CallbackError (docs/distributed.md, "Callbacks").
  FFTCallback prolog{};
  /// See prolog.
  FFTCallback epilog{};
};

/// The execute options of FFT, with the same meaning: `release_workspace` also releases the exchange buffers, and
/// `out` has the shape of output_box() (after a leading axis of `fields` when that is more than 1), the dtype
/// result_dtype(), is contiguous and on the communicator's device. `prolog_data` and `epilog_data` raise StateError
/// (DistributedFFT takes no callbacks).
using DistributedExecuteOptions = FFTExecuteOptions;

}  // namespace CUPLAN_ABI_NAMESPACE
namespace detail {
class DistributedFftImpl;
}
inline namespace CUPLAN_ABI_NAMESPACE {

/// One rank's part of a distributed FFT. Move-only. Every rank of the communicator constructs one with the same
/// global shape and options, and calls plan and execute in the same order (the exchanges are collective).
class CUPLAN_API DistributedFFT {
 public:
  /// `global_shape` is the logical shape of the transform (for R2C and C2R the real side; the complex side has
  /// n/2+1 on the last axis). `local_operand` is this rank's input_box() of the input (with a leading axis of
  /// `options.fields` when that is more than 1): contiguous, in device memory of the communicator's device.
  /// Validates; no GPU work and no communication.
  DistributedFFT(Communicator comm, Shape global_shape, TensorRef local_operand, DistributedFFTOptions options = {});
  /// Takes over the plan; the moved-from object's calls throw StateError.
  DistributedFFT(DistributedFFT&&) noexcept;
  /// Releases this object's plan and takes over the other's; the moved-from object's calls throw StateError.
  DistributedFFT& operator=(DistributedFFT&&) noexcept;
  DistributedFFT(const DistributedFFT&) = delete;
  DistributedFFT& operator=(const DistributedFFT&) = delete;
  ~DistributedFFT();

  /// The boxes of this communicator's rank for an operand of `operand_dtype`, before any operand exists (to
  /// allocate the local operand). Same checks and errors as the constructor.
  static DistributedBoxes boxes(const Communicator& comm, const Shape& global_shape, DType operand_dtype,
                                const DistributedFFTOptions& options = {});

  /// Allocates the exchange buffers and plans the local FFTs (on `stream`, else the construction stream).
  void plan(std::optional<StreamRef> stream = {});
  /// Enqueues the transform on the stream and returns (device operands never block). Collective. StateError
  /// before plan(): an execute never plans, because planning is collective and may block.
  Tensor execute(DistributedExecuteOptions options = {});
  /// Replaces the operand by one of the same shape and dtype on the same device.
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream = {});
  /// Drops the object's reference to the operand (plan and execute need reset_operand first).
  void release_operand();
  /// Releases plans and buffers; every later call throws StateError. Never throws.
  void free() noexcept;

  /// This rank's box of the operand.
  DistributedBox input_box() const;
  /// This rank's box of the result (transposed for ResultLayout::optimized).
  DistributedBox output_box() const;
  Decomposition decomposition() const;      ///< slab or pencil (as resolved)
  std::array<int, 2> process_grid() const;  ///< rows x cols (slab: size x 1)
  /// The transform type (c2c, r2c or c2r) as resolved.
  FFTType type() const;
  /// Element type of the result.
  DType result_dtype() const;
  /// How the exchanges move data: `automatic` before plan(), then copy_engine or nccl (the same on every rank).
  ExchangeMethod exchange_method() const;
  /// Device memory this rank's object holds between executes, in bytes: exchange buffers and local FFT workspaces
  /// (not the operand, nor the result). Before plan(): 0.
  std::size_t device_memory_bytes() const;
  /// One line: type, precision, global shape, decomposition, rank, boxes, steps.
  std::string describe() const;

 private:
  std::unique_ptr<detail::DistributedFftImpl> impl_;
};

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
