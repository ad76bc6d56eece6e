// SPDX-License-Identifier: Apache-2.0
// The background path of the function forms (see planned_call.hpp).

#include "plan/planning/planned_call.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

#include "base/cuda_check.hpp"
#include "base/error_context.hpp"
#include "base/fault_injection.hpp"
#include "plan/ordering/tensor_accesses.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/storage.hpp"

namespace cuplan::detail {
namespace {

std::atomic<bool> g_background_off{false};

// The event E of one call: the caller's work before the call, which the planner's stream waits for.
class CallerEvent : NonCopyable {
 public:
  explicit CallerEvent(StreamRef caller) {
    CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    const cudaError_t status = cudaEventRecord(event_, caller.native());
    if (status != cudaSuccess) {
      CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
      CUPLAN_CUDA_CHECK(status);
    }
  }
  ~CallerEvent() { CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_)); }
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Everything one background job holds; the gate opens, at the latest, when the job goes.
struct Job {
  PlanKey key;
  int device;
  cudaStream_t caller;
  const char* who;
  std::unique_ptr<CallerEvent> event;
  std::shared_ptr<StreamGate> gate;  // shared with the overdue handling
  std::vector<TensorRef> reads;      // alive until the work is enqueued (their release is ordered on the caller)
  std::function<CachedPlan*(StreamRef)> plan;
  std::function<void(CachedPlan&, StreamRef)> enqueue;
  std::function<void(CachedPlan&)> release;
};

// What a job leaves to the returning thread: its plan (back to the cache, or discarded after a failure) and
// everything that owns memory or an unplanned object. Releasing them may wait on the host for the device (an
// evicted plan's last work, a Tensor dropped away from its per-thread stream), and the device may wait for the gate
// of a job still queued: never on the planning thread.
struct JobRemains {
  PlanLease lease;
  bool failed = false;
  std::vector<TensorRef> reads;
  std::function<CachedPlan*(StreamRef)> plan;  // owns the object while it is not planned
  std::function<void(CachedPlan&, StreamRef)> enqueue;
};

void run_job(Job& job) {
  BackgroundPlanner& planner = BackgroundPlanner::instance();
  auto remains = std::make_shared<JobRemains>();
  std::optional<StreamRef> s;
  try {
    const DeviceScope scope(Device::cuda(job.device));
    s = planner.stream(job.device);
    CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(s->native(), job.event->get(), 0));
    plan_creation_fault_point(job.who);
    remains->lease = adopt_plan(job.key, std::unique_ptr<CachedPlan>(job.plan(*s)));
    job.enqueue(*remains->lease.get(), *s);
    job.release(*remains->lease.get());
    job.gate->open_on(*s);
  } catch (...) {
    remains->failed = true;
    // Held before the gate opens: whoever sees the gate open (a synchronize) finds the error.
    auto deferred = std::make_shared<DeferredError>(std::current_exception());
    log(LogLevel::warning, "{}: background planning failed; raised by the next call or synchronize on its stream: {}",
        job.who, deferred->message());
    defer_error(job.caller, std::move(deferred));
    // Open the gate once the caller's earlier work is done (S waited for it), else at once: never a hang.
    try {
      if (!s) throw NotSupported("no planner stream");
      const DeviceScope scope(Device::cuda(job.device));
      job.gate->open_on(*s);
    } catch (...) {
      job.gate->open_now();
    }
  }
  remains->reads = std::move(job.reads);
  remains->plan = std::move(job.plan);
  remains->enqueue = std::move(job.enqueue);
  job.gate.reset();
  job.event.reset();
  planner.submit_return([&planner, remains, key = job.key] {
    if (remains->failed) remains->lease.discard();
    *remains = JobRemains{};  // the plan joins the cache before its key stops counting as being planned
    planner.finish_planning(key);
  });
}

}  // namespace

int gateable_device(const ExecutionTarget& target, bool plan_at_call) noexcept {
  return target.cuda && !target.host_operands && !target.blocking && !plan_at_call ? target.device : -1;
}

Tensor background_result(const TensorRef* out, const Shape& shape, const Strides& strides, DType dtype, int device,
                         StreamRef caller) {
  if (out != nullptr) return out->as_tensor();
  return Tensor::empty_strided(shape, strides, dtype, Device::cuda(device), caller);
}

void plan_creation_fault_point(const char* who) {
  if (fault::inject(fault::Site::plan))
    throw_injected_library_failure("cuplan", fmt::format("{}: plan creation", who).c_str(), {__FILE__, __LINE__});
}

void raise_planning_errors(const std::optional<StreamRef>& stream, int device) {
  if (deferred_error_count_hint() == 0) [[likely]]
    return;
  if (stream) {
    raise_deferred_errors(stream->native());
  } else {
    raise_deferred_errors(current_stream(device >= 0 ? std::optional(Device::cuda(device)) : std::nullopt).native());
  }
}

bool stream_allows_gate(StreamRef stream) {
  const cudaStream_t handle = stream.native();
  if (is_default_stream_handle(handle)) return false;
  unsigned flags = 0;
  CUPLAN_CUDA_CHECK(cudaStreamGetFlags(handle, &flags));
  if ((flags & cudaStreamNonBlocking) == 0) return false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUPLAN_CUDA_CHECK(cudaStreamIsCapturing(handle, &status));
  return status == cudaStreamCaptureStatusNone;
}

bool lazy_module_loading(const char* setting) noexcept {
  return setting == nullptr || std::string_view(setting) != "EAGER";
}

bool background_planning_enabled() noexcept {
  static const bool lazy = [] {
    const bool is_lazy = lazy_module_loading(std::getenv("CUDA_MODULE_LOADING"));
    if (is_lazy)
      log(LogLevel::warning,
          "background planning needs eager module loading (CUDA_MODULE_LOADING=EAGER): under lazy loading a library "
          "kernel's first launch can wait for the caller's gate; planning on the callers' threads");
    return is_lazy;
  }();
  return !lazy && !g_background_off.load(std::memory_order_relaxed);
}

void submit_background_call(const PlanKey& key, int device, StreamRef caller, const EventList& after,
                            const Tensor& written, const std::vector<TensorRef>& reads, const char* who,
                            std::function<CachedPlan*(StreamRef)> plan,
                            std::function<void(CachedPlan&, StreamRef)> enqueue,
                            std::function<void(CachedPlan&)> release) {
  auto job = std::make_shared<Job>(Job{key, device, caller.native(), who, nullptr, nullptr, reads, std::move(plan),
                                       std::move(enqueue), std::move(release)});
  BackgroundPlanner& planner = BackgroundPlanner::instance();
  // One step for every caller: jobs run in the order their gates were closed (see submission_mutex()).
  const std::lock_guard submission(planner.submission_mutex());
  // The caller's stream: after its `after` events and the pending producers of the call's Tensors, then E.
  wait_for_events(caller, after);
  std::vector<OperandUse> uses;
  for (const TensorRef& read : reads)
    uses.push_back({"operand", &read.view(), false, false, Access::storage(read).get()});
  uses.push_back({"result", &written.view(), true, false, Access::storage(written).get()});
  TensorAccesses accesses;
  accesses.begin(caller, uses);
  job->event = std::make_unique<CallerEvent>(caller);
  job->gate = std::make_shared<StreamGate>(caller);
  // Noted on the caller's stream after the gate: a later reader or writer on another stream waits for the gate,
  // and so for the background work.
  accesses.end();
  for (const TensorRef& read : reads) read.record_stream(caller);
  planner.start_planning(key);
  std::shared_ptr<StreamGate> gate = job->gate;
  const cudaStream_t caller_handle = caller.native();
  try {
    planner.submit([job] { run_job(*job); },
                   [gate, caller_handle, who] {
                     // The plan waits for the device, which waits for this gate: open it, say so, stop planning
                     // in the background.
                     g_background_off.store(true, std::memory_order_relaxed);
                     auto error = std::make_shared<DeferredError>(std::make_exception_ptr(OrderingError(fmt::format(
                         "{}: background planning ran longer than {} ms (plan creation waited for the device, which "
                         "waited for this call's gate; lazy module loading can do this): the gate was opened "
                         "before the call's work, so work enqueued after the call on this stream was not ordered "
                         "after it. The process plans on the callers' threads from now on; set "
                         "CUDA_MODULE_LOADING=EAGER or planning_mode = PlanningMode::blocking",
                         who, BackgroundPlanner::instance().overdue_limit().count()))));
                     log(LogLevel::warning, "{}", error->message());
                     defer_error(caller_handle, std::move(error));
                     gate->open_now();  // after the error is held: whoever sees the gate open finds it
                   });
  } catch (...) {
    planner.finish_planning(key);
    throw;  // the job's gate opens as it goes
  }
}

}  // namespace cuplan::detail
