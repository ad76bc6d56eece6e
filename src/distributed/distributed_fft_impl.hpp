// SPDX-License-Identifier: Apache-2.0
#pragma once
// State of one rank's DistributedFFT: the resolved layout, the step sequence with the buffer each step reads and
// writes, the local FFT objects (public cuplan::FFT on views of the exchange buffers), the exchange route (copy
// engines or NCCL) with what the ranks told each other in plan(), and the phase event. Construction and plan live
// in distributed_fft_impl.cpp, execute and the exchanges in distributed_fft_execute.cpp.

#include <optional>
#include <vector>

#include "cuplan/distributed.hpp"
#include "distributed/decomposition.hpp"
#include "distributed/exchange/box_transfer.hpp"
#include "distributed/exchange/nccl/peer_table.hpp"
#include "distributed/local_array.hpp"
#include "distributed/phase_order.hpp"

namespace cuplan::detail {

namespace dist {
/// The extents of `box` as a Shape (its ndim axes).
Shape shape_of(const Box& box);
}  // namespace dist

/// The layout arithmetic of one rank's transform, before any operand exists (also DistributedFFT::boxes).
struct Resolved {
  FFTType type = FFTType::c2c;
  dist::Layout layout;
  std::array<std::int64_t, 3> real_shape{1, 1, 1};
  std::array<std::int64_t, 3> complex_shape{1, 1, 1};
  dist::Box in_box;
  dist::Box out_box;
};
/// "offset (a, b, c) extent AxBxC": a box in messages and describe().
std::string box_text(const dist::Box& box);
/// The public form of a box (its ndim axes).
DistributedBox public_box(const dist::Box& box);
/// The pipeline's name for a transform type.
dist::Type to_dist(FFTType type);
/// Checks the type, dtype, layouts, shape and decomposition; InvalidArgument naming what is wrong.
Resolved resolve_transform(int rank, int size, const Shape& global_shape, DType dtype,
                           const DistributedFFTOptions& options);
DistributedBoxes boxes_of(const Resolved& resolved);
/// The part of `whole` (a row-major array over `owner`) that holds `chunk`, a block of owner along axis 0.
TensorView chunk_view(const TensorView& whole, const dist::Box& owner, const dist::Box& chunk);
/// Chunks of the local FFT before a copy-engine exchange when DistributedFFTOptions::chunks is 0.
inline constexpr int default_chunks = 4;

class DistributedFftImpl {
 public:
  /// Where a step's data lives: the caller's operand, one of the two local buffers, one of the two receive
  /// buffers that peers write into (copy-engine route; consecutive exchanges alternate, so that peers never write
  /// where this rank still reads), or the result.
  enum class Loc { operand, buf0, buf1, peer0, peer1, result };
  enum class Route { local, nccl, copy_engine };

  struct Stage {
    dist::Step step;
    Loc src = Loc::operand;
    Loc dst = Loc::result;
    Loc send = Loc::buf0;      ///< NCCL exchange: packed outgoing pieces (src itself when send_direct)
    Loc recv = Loc::buf1;      ///< NCCL exchange: packed incoming pieces (dst itself when recv_direct)
    bool send_direct = false;  ///< NCCL: the packed send buffer would repeat src's layout: send from src
    bool recv_direct = false;  ///< NCCL: the packed receive buffer would repeat dst's layout: receive into dst
    dist::Box src_box;
    dist::Box dst_box;
    dist::Exchange exchange;
    std::vector<dist::Box> peer_boxes;       ///< copy engine: every rank's box after the exchange
    int peer_slot = 0;                       ///< copy engine: the receive buffer (0 or 1) it writes into
    std::optional<FFT> fft;                  ///< fft: made by plan()
    std::vector<FFT> chunk_ffts;             ///< fft before a copy-engine exchange: one per chunk along axis 0
    std::vector<dist::Box> chunk_boxes;      ///< their boxes in src_box's coordinates
    std::vector<dist::Box> chunk_out_boxes;  ///< the same chunks of dst_box
    /// copy engine: the copies of each chunk of the source (one entry when the source is not chunked), made once
    /// in plan() so that execute only enqueues them
    std::vector<std::vector<dist::BoxTransfer>> transfers;
  };

  DistributedFftImpl(Communicator comm, const Shape& global_shape, TensorRef operand, DistributedFFTOptions options);

  void plan(std::optional<StreamRef> stream);
  Tensor execute(const DistributedExecuteOptions& options);
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream);
  void release_operand();
  void free() noexcept;

  DistributedBox input_box() const;
  DistributedBox output_box() const;
  Decomposition decomposition() const;
  std::array<int, 2> process_grid() const;
  FFTType type() const { return type_; }
  DType result_dtype() const { return out_dtype_; }
  ExchangeMethod exchange_method() const;
  std::size_t device_memory_bytes() const;
  std::string describe() const;
  /// The object as a LibraryError's context names it: type, dtypes, global shape, rank and device.
  std::string error_context() const;

 private:
  void check_live(const char* what) const;
  void check_operand(const TensorView& view) const;
  StreamRef pick_stream(const std::optional<StreamRef>& stream) const;
  void agree_and_route(StreamRef stream);
  void build_stages();
  void allocate_buffers(StreamRef stream);
  void make_ffts(StreamRef stream);
  void plan_transfers();
  void plan_collective(StreamRef stream);
  TensorView view_of(Loc loc, const dist::Box& box, bool real, const TensorView& result) const;
  /// The operand's and the result's shapes: the box, after a leading axis of `fields` when there are several.
  Shape operand_shape() const;
  Shape result_shape() const;
  /// Field f of a tensor with a leading field axis (the tensor itself for one field).
  TensorView field_slice(const TensorView& whole, int field) const;
  /// Points the local FFTs that read the operand at field f of it.
  void bind_operand(int field, StreamRef stream);
  /// True when the stage's FFT writes over its input (an in-place transform's operand or buffer).
  bool writes_in_place(const Stage& stage) const;

  void run_fft(Stage& stage, Direction direction, bool release_workspace, const TensorView& result, StreamRef stream,
               Stage* then_copy);
  void run_nccl_exchange(const Stage& stage, const TensorView& result, StreamRef stream);
  void run_copy_exchange(const Stage& stage, const TensorView& result, StreamRef stream);
  void connect_peers(StreamRef stream);
  void release_copy_resources() noexcept;
  void* peer_slot_address(int rank, int slot) const;
  void log_route() const;

  Communicator comm_;
  dist::Layout layout_;
  FFTType type_ = FFTType::c2c;
  DistributedFFTOptions options_;
  std::vector<std::int64_t> global_shape_;
  std::array<std::int64_t, 3> real_shape_{1, 1, 1};
  std::array<std::int64_t, 3> complex_shape_{1, 1, 1};
  DType in_dtype_ = c64;
  DType out_dtype_ = c64;
  DType complex_dtype_ = c64;
  dist::Box in_box_;
  dist::Box out_box_;
  std::vector<dist::Step> steps_;
  std::vector<Stage> stages_;
  std::int64_t buffer_elements_ = 0;
  std::int64_t peer_elements_ = 0;  // elements of one receive buffer, the same on every rank
  int peer_slots_ = 0;
  Route route_ = Route::local;
  bool route_known_ = false;
  dist::PeerTable peers_;
  cudaStream_t copy_stream_ = nullptr;  // copy-engine route: the copies of chunk k run beside chunk k+1's FFT
  std::vector<cudaEvent_t> chunk_events_;
  cudaEvent_t copies_done_ = nullptr;
  int field_ = 0;  // the field that Loc::operand views

  TensorRef operand_;
  bool has_operand_ = false;
  Tensor buffers_[2];
  bool buffers_live_ = false;
  bool planned_ = false;
  bool buffer_used_[2] = {false, false};
  bool freed_ = false;
  std::optional<StreamRef> construction_stream_;
  dist::PhaseOrder phases_;  // the stream contract between phases, as every distributed object keeps it
};

}  // namespace cuplan::detail
