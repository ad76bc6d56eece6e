// SPDX-License-Identifier: Apache-2.0
#pragma once
// FFT over a host operand with CUDA execution, through the staging engine (docs/staging.md): the batch axes are
// split into chunks that fit the device memory limit, each chunk transformed by a cuFFT plan of its own shape.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fft/cufft/cufft_backend.hpp"
#include "fft/planner.hpp"
#include "plan/staging/chunk_grid.hpp"
#include "plan/staging/chunking.hpp"
#include "plan/staging/pipeline.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// What the planned FFT decided for its host operand.
struct StagedFftRequest {
  const LayoutDecision* decision = nullptr;  ///< the whole operand's decision (shapes, dtypes, result strides)
  Strides in_strides;                        ///< the host operand's strides
  Parity parity = Parity::even;
  int device = 0;
  std::size_t limit = 0;  ///< device_memory_limit as given (0: the default fraction of free memory)
};

class StagedFft {
 public:
  /// Plans the split and the cuFFT plans of the chunk and of the last chunk. NotSupported when one transform's
  /// data alone exceeds the limit; InvalidArgument when the limit cannot hold one chunk (both name the minimum).
  explicit StagedFft(const StagedFftRequest& request);
  /// Transforms `x` into `result` (both host memory) on the caller's stream `s`; returns when the result is on the
  /// host. `scale` multiplies the result (1: none).
  void execute(const TensorView& x, const TensorView& result, Direction direction, double scale, StreamRef s);
  /// Makes `stream` wait for the setup work that planning the chunks' cuFFT plans left queued on the device.
  void order_setup_before(cudaStream_t stream);
  /// Workspace, pinned and device slots go back; the next execute allocates them again.
  void release() noexcept;
  /// Bytes held between calls: the workspace and the device slots, and the pinned host slots.
  std::size_t held_bytes() const noexcept {
    return workspace_.size() + pipeline_.device_bytes() + pipeline_.host_bytes();
  }
  std::int64_t chunk_count() const noexcept { return grid_.count(); }
  std::size_t limit() const noexcept { return limit_; }
  /// Device bytes an execute holds at most (slots and workspace).
  std::size_t device_bytes() const noexcept { return peak_bytes_; }

 private:
  struct Piece {
    LayoutDecision decision;
    std::unique_ptr<CufftPlan> plan;
    OutputWalk walk;
    std::size_t in_bytes = 0, out_bytes = 0;
  };
  Piece make_piece(std::int64_t extent) const;
  void plan_pieces(const staging::ChunkPlan& chunks);

  StagedFftRequest request_;
  std::size_t limit_ = 0;
  int split_axis_ = -1;          ///< batch axis split into chunks (-1: none, a single chunk)
  std::vector<int> outer_axes_;  ///< batch axes outside it: each chunk fixes one index of each
  std::size_t unit_bytes_ = 0;
  staging::ChunkGrid grid_;  ///< where each chunk lies in the operand and the result
  Piece full_, last_;
  std::size_t peak_bytes_ = 0;
  DeviceBuffer workspace_;
  staging::StagingPipeline pipeline_;
};

}  // namespace cuplan::detail
