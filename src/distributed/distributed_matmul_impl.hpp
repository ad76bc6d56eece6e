// SPDX-License-Identifier: Apache-2.0
#pragma once
// State of one rank's DistributedMatmul: the problem as every rank describes it, the chosen plan (algorithm and
// redistributions, matmul_layout.hpp), the redistributions (BoxExchange each), the buffers the algorithm computes
// in, one cuplan::Matmul per step, the side stream that carries the transfers beside the products, and the phase
// order. The pure resolution (options, problem, plan, local arrays) lives in distributed_matmul_layout.cpp;
// construction, plan and the queries in distributed_matmul_impl.cpp; execute and the three algorithms in
// distributed_matmul_execute.cpp.

#include <cuda_runtime_api.h>

#include <optional>
#include <vector>

#include "cuplan/distributed_matmul.hpp"
#include "distributed/exchange/box_exchange.hpp"
#include "distributed/exchange/copy_engine_gather.hpp"
#include "distributed/exchange/nccl/peer_table.hpp"
#include "distributed/finish.hpp"
#include "distributed/local_array.hpp"
#include "distributed/matmul_layout.hpp"
#include "distributed/phase_order.hpp"

namespace cuplan::detail {

/// A stored row-major local matrix read as op() of it: logical rows x cols, sub-blocks as views.
struct LogicalMatrix {
  const void* data = nullptr;
  DType dtype;
  std::int64_t stored_rows = 0, stored_cols = 0;
  bool transposed = false;
  Device device;
  std::int64_t rows() const noexcept { return transposed ? stored_cols : stored_rows; }
  std::int64_t cols() const noexcept { return transposed ? stored_rows : stored_cols; }
  /// Logical rows [r0, r0 + h) and columns [c0, c0 + w).
  TensorView block(std::int64_t r0, std::int64_t h, std::int64_t c0, std::int64_t w) const;
  TensorView whole() const { return block(0, rows(), 0, cols()); }
};

/// The pure part of a product on one rank: checked options, the problem and the plan.
struct MatmulResolved {
  dist::Problem problem;
  dist::AlgoPlan plan;
  dist::NativeArrays user, native;
};
MatmulResolved resolve_product(int rank, int size, std::int64_t m, std::int64_t n, std::int64_t k,
                               const DistributedMatmulOptions& options);
DistributedMatmulBlocks blocks_of(const MatmulResolved& resolved, int rank);
/// The public name of an algorithm.
DistributedMatmulAlgorithm to_public(dist::Algo algo);
/// bias, relu_bias or gelu_bias: the epilogs that take a bias.
bool bias_epilog(Epilog epilog);

class DistributedMatmulImpl {
 public:
  DistributedMatmulImpl(Communicator comm, std::int64_t m, std::int64_t n, std::int64_t k, TensorRef a, TensorRef b,
                        DistributedMatmulOptions options);
  ~DistributedMatmulImpl() { free(); }

  void plan(std::optional<StreamRef> stream);
  void autotune(const AutotuneOptions& options);
  Tensor execute(const DistributedMatmulExecuteOptions& options);
  void reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream);
  void release_operand();
  void free() noexcept;

  DistributedMatmulBlocks local_blocks() const;
  DistributedMatmulAlgorithm algorithm() const;
  DType result_dtype() const { return out_dtype_; }
  Shape result_shape() const;
  ExchangeMethod exchange_method() const;
  std::size_t device_memory_bytes() const;
  std::string describe() const;
  /// The object as a LibraryError's context names it (describe() and the device).
  std::string error_context() const;

 private:
  void check_live(const char* what) const;
  void check_operand(MatmulOperand which, const TensorView& view) const;
  StreamRef pick(const std::optional<StreamRef>& stream) const;
  void plan_collective(StreamRef stream);
  void connect_route(StreamRef stream);
  void make_products(StreamRef stream);
  void warm_up(StreamRef stream);
  LogicalMatrix a_source() const;
  LogicalMatrix b_source() const;
  LogicalMatrix slot_matrix(int slot, std::int64_t stored_rows, std::int64_t stored_cols, bool transposed,
                            std::size_t byte_offset, DType dtype) const;
  MatmulOptions product_options(bool with_c, bool fold_activation) const;
  TensorView rows_of(const TensorView& matrix, std::int64_t r0, std::int64_t h) const;
  void run_allgather(const TensorView& target, const DistributedMatmulExecuteOptions& o, StreamRef stream);
  void run_gathered_product(int step, const TensorView& target, const DistributedMatmulExecuteOptions& o,
                            StreamRef stream);
  void run_reduce_scatter(const TensorView& target, const DistributedMatmulExecuteOptions& o, StreamRef stream);
  void run_summa(const TensorView& acc, const DistributedMatmulExecuteOptions& o, StreamRef stream);
  void ensure_events(std::size_t count);
  void release_resources() noexcept;

  Communicator comm_;
  DistributedMatmulOptions options_;
  MatmulResolved r_;
  int rank_ = 0, size_ = 1;
  DType in_dtype_, out_dtype_;
  TensorRef a_, b_;
  std::optional<TensorRef> c_, bias_;
  bool has_operands_ = true;
  bool a_set_ = true, b_set_ = true, c_set_ = true, bias_set_ = true;  // after release_operand: which came back
  bool has_c_ = false;                                                 // c given and beta != 0
  bool has_bias_ = false;                                              // a bias epilog
  dist::Activation activation_ = dist::Activation::none;
  bool fold_ = false;  // C and a bias-free activation go into the local products (D computed in place)

  dist::PeerTable table_;  // agreement
  dist::BoxExchange move_a_, move_b_, move_d_;
  Tensor a_native_, b_native_, d_native_;     // redistributed operands; D in the algorithm's layout (SUMMA's sum)
  Tensor slots_[2];                           // all-gather: blocks of A around the ring; SUMMA: A and B panels
  dist::CopyEngineAllGather gather_;          // all-gather by copy engine: every block of A, pushed by its owner
  std::size_t slot_b_offset_ = 0;             // SUMMA: bytes of the A part of a slot
  Tensor partial_;                            // reduce-scatter: this rank's partial products of every row block
  std::vector<std::size_t> partial_offsets_;  // reduce-scatter: byte offset of row block j in partial_
  Tensor stage_;  // all-gather: D's block of a step whose rows start off 16-byte alignment, before its copy
  std::vector<dist::Panel> panels_;
  std::vector<Matmul> products_;
  cudaStream_t side_ = nullptr;
  std::vector<cudaEvent_t> transfer_done_, product_done_;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;

  dist::PhaseOrder phases_;
  std::optional<StreamRef> construction_stream_;
  bool planned_ = false;
  bool freed_ = false;
};

}  // namespace cuplan::detail
