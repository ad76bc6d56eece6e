#pragma once
// State of one rank's DistributedFFT: the resolved layout, the step sequence with the buffer each step reads and
// writes, the local FFT objects (public cuplan::FFT on views of the exchange buffers) and the phase event.

#include <optional>
#include <vector>

#include "cuplan/distributed.hpp"
#include "distributed/decomposition.hpp"

namespace cuplan::detail {

/// The layout arithmetic of one rank's transform, before any operand exists (also DistributedFFT::boxes).
struct Resolved {
  FFTType type = FFTType::c2c;
  dist::Layout layout;
  std::array<std::int64_t, 3> real_shape{1, 1, 1};
  std::array<std::int64_t, 3> complex_shape{1, 1, 1};
  dist::Box in_box;
  dist::Box out_box;
};
/// Checks the type, dtype, layouts, shape and decomposition; InvalidArgument naming what is wrong.
Resolved resolve_transform(int rank, int size, const Shape& global_shape, DType dtype,
                           const DistributedFFTOptions& options);
DistributedBoxes boxes_of(const Resolved& resolved);

class DistributedFftImpl {
 public:
  /// Where a step's data lives: the caller's operand, one of the two exchange buffers, or the result.
  enum class Loc { operand, buf0, buf1, result };

  struct Stage {
    dist::Step step;
    Loc src = Loc::operand;
    Loc dst = Loc::result;
    Loc send = Loc::buf0;  ///< exchange: packed outgoing pieces
    Loc recv = Loc::buf1;  ///< exchange: packed incoming pieces
    dist::Box src_box;
    dist::Box dst_box;
    dist::Exchange exchange;
    std::optional<FFT> fft;  ///< fft: made by plan()
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
  std::string describe() const;

 private:
  void check_live(const char* what) const;
  void check_operand(const TensorView& view) const;
  StreamRef pick_stream(const std::optional<StreamRef>& stream) const;
  void begin_phase(StreamRef stream, const EventList& after);
  void end_phase(StreamRef stream);
  void allocate_buffers(StreamRef stream);
  void make_ffts(StreamRef stream);
  TensorView view_of(Loc loc, const dist::Box& box, bool real, const TensorView& result) const;
  void run_exchange(const Stage& stage, const TensorView& result, StreamRef stream);
  void connect_peers(StreamRef stream);

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
  std::vector<Stage> stages_;
  std::int64_t buffer_elements_ = 0;

  TensorRef operand_;
  bool has_operand_ = false;
  Tensor buffers_[2];
  bool buffers_live_ = false;
  bool planned_ = false;
  bool freed_ = false;
  std::optional<StreamRef> construction_stream_;
  EventList pending_after_;  // the constructor's `after`, waited for by the first phase
  std::optional<Event> last_phase_;
};

}  // namespace cuplan::detail
