// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The members that the classes of a planned operation over one operand (FFT, RealTransform, Convolution) declare
/// alike, declared once. Their behaviour is one rule for every operation (docs/getting-started.md); what an
/// operation adds to it is in its class's description.

/// Inside the class `Class` of a planned operation whose execute takes `ExecuteOptions`: move construction and
/// assignment, no copies, the destructor, and the phases plan, execute, reset_operand, release_operand and free.
#define CUPLAN_OPERATION_MEMBERS(Class, ExecuteOptions)                                                               \
  /** Takes over the plan; the moved-from object behaves like a freed one (its calls throw StateError). */            \
  Class(Class&&) noexcept;                                                                                            \
  /** Frees this object's plan and takes over the other's; the moved-from object behaves like a freed one. */         \
  Class& operator=(Class&&) noexcept;                                                                                 \
  Class(const Class&) = delete;                                                                                       \
  Class& operator=(const Class&) = delete;                                                                            \
  /** Same as free(); never throws. */                                                                                \
  ~Class();                                                                                                           \
  /** Makes the plans and the workspace (on `stream`, else the construction stream). */                               \
  void plan(std::optional<StreamRef> stream = {});                                                                    \
  /** Runs the operation. Device operands with CUDA execution: returns once enqueued (unless Blocking::always); host  \
      operands: blocks and returns a host Tensor. */                                                                  \
  Tensor execute(ExecuteOptions options = {});                                                                        \
  /** Replaces the operand by one of the same shape, dtype, memory space class and strides; ordered after the         \
      object's last phase. InvalidArgument naming what differs otherwise. */                                          \
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream = {});                                        \
  /** Drops the object's reference to the operand (an owning Tensor is then freed after its recorded stream uses). */ \
  void release_operand();                                                                                             \
  /** Releases plans, workspace and buffers; every later call throws StateError. Waits on the host for the object's   \
      last phase first (the work already enqueued reads them). */                                                     \
  void free() noexcept

/// The queries of such a class (each a StateError unless the object is live): axes, the result's shape, dtype and
/// strides, uses_cuda, workspace_size and describe.
#define CUPLAN_OPERATION_QUERIES                                                 \
  /** The axes it works along, normalised (non-negative), in the order given. */ \
  const std::vector<int>& axes() const;                                          \
  /** Shape of the result. */                                                    \
  Shape result_shape() const;                                                    \
  /** Element type of the result. */                                             \
  DType result_dtype() const;                                                    \
  /** Strides of the result; an `out` given to execute must have them. */        \
  Strides result_strides() const;                                                \
  /** True when it runs on CUDA, false on the CPU. */                            \
  bool uses_cuda() const;                                                        \
  /** Bytes of workspace and buffers the object holds (0 before plan()). */      \
  std::size_t workspace_size() const;                                            \
  /** One line: dtypes, shapes, axes, what it runs and where, workspace. */      \
  std::string describe() const
