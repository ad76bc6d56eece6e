// SPDX-License-Identifier: Apache-2.0
#pragma once
// The execution route of a Matmul (docs/dev/architecture.md, "Routes"): one class per way a planned product runs,
// chosen once when the Matmul is made. A route owns its path's plan, autotune, execute, release and workspace, and
// opens its phases by the object's stream rule (plan/phase.hpp). MatmulImpl keeps the lifecycle, the operands and
// the phases' order, and never asks which route it holds.

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuplan/matmul.hpp"
#include "matmul/planner.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {
namespace mm {

/// A device view of memory at `data` of `shape` with `strides`; dense row-major for dense_view.
inline TensorView device_view(void* data, DType dtype, const Shape& shape, const Strides& strides, int device) {
  return TensorView(data, dtype, shape, strides, Device::cuda(device), MemorySpace::device);
}
inline TensorView dense_view(void* data, DType dtype, const Shape& shape, int device) {
  return device_view(data, dtype, shape, row_major_strides(shape), device);
}

inline std::size_t bytes_of(const Shape& shape, DType dtype) {
  return static_cast<std::size_t>(checked_numel(shape)) * dtype.size();
}

/// The operand slots of a product, in the order of MatmulOperand.
enum Slot { slot_a, slot_b, slot_c, slot_bias, slot_aux, slot_count };

/// One operand slot of a product.
struct OperandSlot {
  std::optional<TensorRef> ref;
  std::optional<OperandSignature> planned;  ///< what a new operand must match (unset: not part of the product)
};
using OperandSlots = std::array<OperandSlot, slot_count>;

}  // namespace mm

/// What a route reads of its Matmul. MatmulImpl owns all of it and the route: the options (alpha and beta as last
/// set), the planned problem and the current operands, read at each phase.
struct MatmulRouteContext {
  const char* who;
  const MatmulOptions& options;
  const mm::Problem& problem;
  const mm::OperandSlots& operands;
  const ExecutionTarget& target;
  PhaseOrder& order;
  PhaseStreams& streams;
};

/// Where D lives and how it must be aligned (what an execute's `out` must match besides the layout).
struct MatmulResultPlacement {
  int device = -1;
  std::uint32_t alignment = 1;
};

class MatmulRoute {
 public:
  virtual ~MatmulRoute() = default;
  MatmulRoute(const MatmulRoute&) = delete;
  MatmulRoute& operator=(const MatmulRoute&) = delete;

  /// NotSupported when the route cannot run the planned problem (default: it runs every one).
  virtual void check_supported(const mm::Problem& /*problem*/) const {}
  /// The route's own additions to a newly planned problem (dense copies of staged operands, C copied into D).
  virtual void adapt_problem(mm::Problem& /*problem*/) {}
  virtual MatmulResultPlacement result_placement(DType dtype) const noexcept = 0;
  /// The plan phase. The first plan that opens a stream phase also waits for MatmulOptions::after unless `options`
  /// names its own events; it then clears `construct_after_pending`.
  virtual void plan(const MatmulPlanOptions& options, bool& construct_after_pending) = 0;
  virtual std::vector<AlgorithmInfo> algorithms() const = 0;
  virtual void autotune(const AutotuneOptions& options) = 0;
  /// Runs a validated execute (the object is planned and has its operands; `out` matches the planned D).
  virtual Tensor execute(const MatmulExecuteOptions& options) = 0;
  /// New alpha / beta (MatmulImpl's options already hold them; default: the route reads them there per call).
  virtual void scalars_changed(std::complex<double> /*alpha*/, std::complex<double> /*beta*/) {}
  /// reset_operand(s)' phase: new operands may be written by work on the stream (by the object's rule), ordered
  /// after the object's last phase where a later execute relies on that order (default: nothing to order, every
  /// execute returns when D is written).
  virtual void order_new_operands(const std::optional<StreamRef>& /*stream*/, const char* /*method*/) {}
  /// The operands changed: uses recorded for the old ones no longer cover them (default: the route records none).
  virtual void operands_changed() noexcept {}
  /// Plans, workspace, buffers and the last outputs go.
  virtual void free() noexcept = 0;
  /// For describe(): " (bias gradient by a separate kernel)" or nothing (the default); "CUDA execution on cuda:0" /
  /// "CPU execution"; the algorithm. For a LibraryError's context: "cuda:0 (cuBLASLt)" / "cpu (BLAS)".
  virtual std::string epilog_note() const { return {}; }
  virtual std::string execution() const = 0;
  virtual std::string algorithm() const = 0;
  virtual std::string location() const = 0;

  /// The epilog outputs of the last execute (undefined when the epilog has none).
  const Tensor& aux() const noexcept { return aux_out_; }
  const Tensor& bias_gradient() const noexcept { return bias_gradient_out_; }

 protected:
  explicit MatmulRoute(const MatmulRouteContext& context) : context_(context) {}

  MatmulRouteContext context_;
  Tensor aux_out_, bias_gradient_out_;
};

/// The route of a Matmul on `target` (the one place that tells the routes apart).
std::unique_ptr<MatmulRoute> make_matmul_route(const MatmulRouteContext& context);

}  // namespace cuplan::detail
