// SPDX-License-Identifier: Apache-2.0
// The background path of the function forms (see planned_call.hpp).

#include "plan/planning/planned_call.hpp"

#include <fmt/format.h>

#include "base/cuda_check.hpp"
#include "base/error_context.hpp"
#include "base/fault_injection.hpp"
#include "plan/ordering/tensor_accesses.hpp"
#include "runtime/storage.hpp"

namespace cuplan::detail {
namespace {

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
  std::unique_ptr<StreamGate> gate;
  std::vector<TensorRef> reads;  // alive until the work is enqueued (their release is ordered on the caller)
  std::function<CachedPlan*(StreamRef)> plan;
  std::function<void(CachedPlan&, StreamRef)> enqueue;
  std::function<void(CachedPlan&)> release;
};

void run_job(Job& job) {
  BackgroundPlanner& planner = BackgroundPlanner::instance();
  std::optional<StreamRef> s;
  {
    PlanLease lease;
    try {
      const DeviceScope scope(Device::cuda(job.device));
      s = planner.stream(job.device);
      CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(s->native(), job.event->get(), 0));
      plan_creation_fault_point(job.who);
      lease = adopt_plan(job.key, std::unique_ptr<CachedPlan>(job.plan(*s)));
      job.enqueue(*lease.get(), *s);
      job.release(*lease.get());
      job.gate->open_on(*s);
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      lease.discard();
      // Open the gate once the caller's earlier work is done (S waited for it), else at once: never a hang.
      try {
        if (!s) throw NotSupported("no planner stream");
        const DeviceScope scope(Device::cuda(job.device));
        job.gate->open_on(*s);
      } catch (...) {
        job.gate->open_now();
      }
      auto deferred = std::make_shared<DeferredError>(error);
      log(LogLevel::warning, "{}: background planning failed; raised by the next call or synchronize on its stream: {}",
          job.who, deferred->message());
      defer_error(job.caller, std::move(deferred));
    }
  }  // the plan joins the cache before its key stops counting as being planned
  job.reads.clear();
  job.gate.reset();
  job.event.reset();
  planner.finish_planning(job.key);
}

}  // namespace

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

bool stream_capturing(StreamRef stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream.native(), &status) != cudaSuccess) {
    (void)cudaGetLastError();  // the legacy stream while another captures globally: treat as capturing
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

void submit_background_call(const PlanKey& key, int device, StreamRef caller, const EventList& after,
                            const Tensor& written, const std::vector<TensorRef>& reads, const char* who,
                            std::function<CachedPlan*(StreamRef)> plan,
                            std::function<void(CachedPlan&, StreamRef)> enqueue,
                            std::function<void(CachedPlan&)> release) {
  auto job = std::make_shared<Job>(Job{key, device, caller.native(), who, nullptr, nullptr, reads, std::move(plan),
                                       std::move(enqueue), std::move(release)});
  // The caller's stream: after its `after` events and the pending producers of the call's Tensors, then E.
  wait_for_events(caller, after);
  std::vector<OperandUse> uses;
  for (const TensorRef& read : reads)
    uses.push_back({"operand", &read.view(), false, false, Access::storage(read).get()});
  uses.push_back({"result", &written.view(), true, false, Access::storage(written).get()});
  TensorAccesses accesses;
  accesses.begin(caller, uses);
  job->event = std::make_unique<CallerEvent>(caller);
  job->gate = std::make_unique<StreamGate>(caller);
  // Noted on the caller's stream after the gate: a later reader or writer on another stream waits for the gate,
  // and so for the background work.
  accesses.end();
  for (const TensorRef& read : reads) read.record_stream(caller);
  BackgroundPlanner& planner = BackgroundPlanner::instance();
  planner.start_planning(key);
  try {
    planner.submit([job] { run_job(*job); });
  } catch (...) {
    planner.finish_planning(key);
    throw;  // the job's gate opens as it goes
  }
}

}  // namespace cuplan::detail
