// The stream-contract mechanism shared by FFT and Matmul (see stateful.hpp).

#include "plan/stateful.hpp"

#include "plan/option_checks.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "base/cuda_check.hpp"
#include "base/geometry.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/storage.hpp"
#include "runtime/stream_handle.hpp"

namespace cuplan::detail {

namespace {

const char* name_at(std::span<const char* const> names, std::size_t i) {
  return i < names.size() ? names[i] : "operand";
}

}  // namespace

ExecutionTarget resolve_execution(Execution execution, Blocking blocking, std::span<const TensorView> operands,
                                  std::span<const char* const> names, const char* who) {
  check_execution(execution, who);
  check_blocking(blocking, who);
  ExecutionTarget target;
  int operand_device = -1;
  std::size_t first_host = operands.size(), first_device = operands.size();
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const TensorView& view = operands[i];
    if (view.on_host()) {
      if (first_host == operands.size()) first_host = i;
      continue;
    }
    if (first_device == operands.size()) {
      first_device = i;
      operand_device = view.device().index();
    } else if (view.device().index() != operand_device) {
      throw InvalidArgument(
          fmt::format("{}: operands must live on one device: expected {} on cuda:{} like {}, got "
                      "cuda:{}",
                      who, name_at(names, i), operand_device, name_at(names, first_device), view.device().index()));
    }
  }
  if (first_host != operands.size() && first_device != operands.size()) {
    throw InvalidArgument(
        fmt::format("{}: operands must all be in host memory or all on one device: {} is in host "
                    "memory but {} is on cuda:{}",
                    who, name_at(names, first_host), name_at(names, first_device), operand_device));
  }
  target.host_operands = first_device == operands.size();

  switch (execution.kind()) {
    case Execution::Kind::automatic:
      target.cuda = !target.host_operands || cuda_available();
      break;
    case Execution::Kind::cuda:
      require_cuda(who);
      target.cuda = true;
      break;
    case Execution::Kind::cpu:
      target.cuda = false;
      break;
  }

  if (target.cuda && !target.host_operands && !cuda_available()) [[unlikely]]
    throw NotSupported(fmt::format(
        "{}: {} is in memory of cuda:{}, which needs a CUDA device, but the CUDA runtime reports none on this "
        "machine; expected a host operand (or Execution::cpu() with host memory)",
        who, name_at(names, first_device), operand_device));
  if (target.cuda) {
    if (execution.device() >= 0) {
      target.device = execution.device();
      Device::cuda(target.device).check_valid("execution device");
      if (!target.host_operands && operand_device != target.device) {
        throw InvalidArgument(
            fmt::format("{}: operands must live on the execution device: expected cuda:{}, got {} "
                        "on cuda:{}",
                        who, target.device, name_at(names, first_device), operand_device));
      }
    } else {
      target.device = target.host_operands ? Device::current().index() : operand_device;
    }
    target.blocking = target.host_operands || blocking == Blocking::always;
    target.multi_device = cuda_device_count() > 1;
  } else {
    target.cpu_threads = cpu_threads(execution.threads(), who);
    target.blocking = true;  // CPU work is synchronous; device operands are copied to the host first
  }
  return target;
}

StreamRef resolve_stream(const std::optional<StreamRef>& stream, int device) {
  if (stream) return *stream;
  return current_stream(Device::cuda(device));
}

void check_stream_device(StreamRef stream, int device, const char* what) {
  const Device stream_device = stream.device();
  if (stream_device.index() != device) {
    throw InvalidArgument(
        fmt::format("{}: the stream must belong to the execution device: expected cuda:{}, got a "
                    "stream of {}",
                    what, device, stream_device.to_string()));
  }
}

PhaseOrder::~PhaseOrder() {
  if (event_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
}

PhaseOrder::PhaseOrder(PhaseOrder&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)),
      last_(other.last_),
      last_owner_(std::move(other.last_owner_)),
      any_(std::exchange(other.any_, false)),
      pending_(std::exchange(other.pending_, false)) {}

PhaseOrder& PhaseOrder::operator=(PhaseOrder&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
    event_ = std::exchange(other.event_, nullptr);
    last_ = other.last_;
    last_owner_ = std::move(other.last_owner_);
    any_ = std::exchange(other.any_, false);
    pending_ = std::exchange(other.pending_, false);
  }
  return *this;
}

void PhaseOrder::record_pending() {
  CUPLAN_CUDA_CHECK(cudaEventRecord(event_, last_));
  pending_ = false;
  last_owner_.reset();
}

void PhaseOrder::begin(StreamRef stream, const EventList& after, int device) {
  for (const EventRef& event : after) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(stream.native(), event.native(), 0));
  if (event_ == nullptr) {
    // Created once, on the object's device, without timing (the cheapest event to record).
    DeviceScope scope(Device::cuda(device));
    CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  if (any_ && last_ != stream.native()) {
    if (pending_) record_pending();
    CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(stream.native(), event_, 0));
  }
}

void PhaseOrder::end(StreamRef stream) {
  const cudaStream_t native = stream.native();
  if (stream.owner() != nullptr || is_default_stream_handle(native)) {
    if (native != last_ || !pending_) {
      // Only on a change of stream: keep a cuplan-made stream alive until its lazy record is made.
      last_owner_ = stream.owner() != nullptr ? stream.owner()->shared_from_this() : nullptr;
    }
    pending_ = true;
  } else {
    CUPLAN_CUDA_CHECK(cudaEventRecord(event_, native));
    pending_ = false;
    last_owner_.reset();
  }
  last_ = native;
  any_ = true;
}

ScopedPhase::~ScopedPhase() {
  if (closed_) return;
  try {
    order_.end(stream_);
  } catch (const std::exception& e) {
    log(LogLevel::warning, "ending a phase left by an exception failed: {}", e.what());
  }
}

void PhaseOrder::synchronize() {
  if (!any_) return;
  if (pending_) record_pending();
  CUPLAN_CUDA_CHECK(cudaEventSynchronize(event_));
}

std::optional<StreamRef> PhaseOrder::last_stream() const noexcept {
  if (!any_) return std::nullopt;
  return StreamRef(last_);
}

void* DeviceBuffer::ensure(std::size_t bytes, int device, StreamRef stream) {
  if (bytes == 0) return storage_ ? storage_->data() : nullptr;
  if (storage_ && storage_->bytes() >= bytes) {
    // A stream once recorded stays recorded (and a cuplan-made one alive), so repeats skip the lock. A raw handle
    // could be destroyed and its value reused by a new stream: those are recorded every time.
    if (!recorded_ || last_stream_ != stream.native()) {
      storage_->record_use(stream);
      last_stream_ = stream.native();
      recorded_ = stream.owner() != nullptr || is_default_stream_handle(stream.native());
    }
    return storage_->data();
  }
  storage_.reset();  // stream-ordered release after every recorded use
  storage_ = Storage::allocate(bytes, Device::cuda(device), MemorySpace::device, stream);
  last_stream_ = stream.native();
  recorded_ = stream.owner() != nullptr || is_default_stream_handle(stream.native());
  return storage_->data();
}

void DeviceBuffer::release() noexcept {
  storage_.reset();
  recorded_ = false;
}

void* DeviceBuffer::data() const noexcept {
  return storage_ ? storage_->data() : nullptr;
}

std::size_t DeviceBuffer::size() const noexcept {
  return storage_ ? storage_->bytes() : 0;
}

void ObjectState::require_alive(const char* method) const {
  if (freed_) [[unlikely]]
    throw StateError(
        fmt::format("{}.{}: the object was freed (free() was called); expected a live object, create a "
                    "new {}",
                    type_name_, method, type_name_));
}

void ObjectState::require_planned(const char* method) const {
  require_alive(method);
  if (!planned_) [[unlikely]]
    throw StateError(
        fmt::format("{}.{}: expected a planned object, got one without a plan; call plan() first", type_name_, method));
}

void ObjectState::require_operand(const char* method) const {
  require_alive(method);
  if (!operand_) [[unlikely]]
    throw StateError(
        fmt::format("{}.{}: expected an operand, got none (release_operand() was called); call "
                    "reset_operand() first",
                    type_name_, method));
}

void check_alignment(const void* pointer, std::size_t alignment, const char* operand, const char* who) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (alignment > 1 && address % alignment != 0) [[unlikely]] {
    throw InvalidArgument(
        fmt::format("{}: {} must be aligned to {} bytes, got address {:#x} ({} bytes past "
                    "an aligned address)",
                    who, operand, alignment, address, address % alignment));
  }
}

void finish_call(const ExecutionTarget& target, StreamRef stream) {
  if (target.cuda && target.blocking) CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream.native()));
}

}  // namespace cuplan::detail
