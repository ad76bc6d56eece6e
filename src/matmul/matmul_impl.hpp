#pragma once
// The object behind Matmul and behind every cached plan of the function forms.

#include <array>
#include <memory>
#include <optional>

#include "cuplan/matmul.hpp"
#include "matmul/cublaslt_backend.hpp"
#include "matmul/layout.hpp"
#include "runtime/plan_cache.hpp"
#include "runtime/stateful.hpp"

namespace cuplan::detail {

class MatmulImpl : public CachedPlan {
 public:
  MatmulImpl(TensorRef a, TensorRef b, MatmulOptions options, const char* who);
  ~MatmulImpl() override;

  void plan(const MatmulPlanOptions& options);
  std::vector<AlgorithmInfo> algorithms() const;
  void autotune(const AutotuneOptions& options);
  Tensor execute(const MatmulExecuteOptions& options);
  void reset_operands(const MatmulOperands& operands, std::optional<StreamRef> stream);
  void release_operands() noexcept;
  void free() noexcept;
  /// alpha / beta of later executes (the function form passes them per call).
  void set_scalars(std::complex<double> alpha, std::complex<double> beta);

  const mm::Problem& problem() const noexcept { return problem_; }
  const Tensor& aux() const noexcept { return aux_out_; }
  const Tensor& bias_gradient() const noexcept { return bias_gradient_out_; }

 private:
  struct Operand {
    std::optional<TensorRef> ref;
    std::uint32_t alignment = 0;  ///< alignment class (<= 16 bytes) planned for
  };
  enum Slot { slot_a, slot_b, slot_c, slot_bias, slot_aux, slot_count };

  void validate_and_plan_problem();
  /// Device pointers for one product on `stream`: staging copies of host or uncopyable operands, C copied into
  /// `d` when it cannot be read directly. `d`, `aux` and `bias_gradient` are the outputs.
  mm::LtPointers stage(StreamRef stream, void* d, void* aux, void* bias_gradient);
  Tensor execute_cpu(const std::optional<TensorView>& out);
  Tensor execute_cuda(const MatmulExecuteOptions& options);
  /// InvalidArgument unless `out` can hold D as planned (dtype, shape, strides, memory, alignment).
  void check_output(const TensorView& out) const;
  void require_ready(const char* method) const;

  const char* who_;
  MatmulOptions options_;
  std::array<Operand, slot_count> operands_;
  std::array<TensorView, slot_count> planned_views_;
  ExecutionTarget target_;
  mm::Problem problem_;
  ObjectState state_;
  PhaseOrder order_;
  std::unique_ptr<mm::LtPlan> lt_;
  bool c_in_d_ = false;
  std::array<DeviceBuffer, slot_count> staging_;
  DeviceBuffer workspace_, result_staging_, aux_staging_, bias_gradient_staging_, scales_, flush_;
  Tensor aux_out_, bias_gradient_out_;
};

}  // namespace cuplan::detail
