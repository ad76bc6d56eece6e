// SPDX-License-Identifier: Apache-2.0
#pragma once
// The function forms' call protocol with planning off the caller's thread (docs/streams.md, "Planning off the
// caller's thread"), written once for every operation. A call that misses the plan cache on device operands, with
// CUDA execution, a stream that is not capturing, the ordering checker off and PlanningMode::background:
//
// 1. validates at once (the operation's constructor: bad input raises here, as with blocking planning);
// 2. orders its stream after the `after` events and the pending producers of its cuplan Tensors, allocates its
//    result on that stream, records an event E there, and closes a gate on it (StreamGate): what the caller
//    enqueues later waits for the gate; the call's reads and writes are noted on the caller's stream, after the
//    gate, so later cuplan calls order themselves after the background work;
// 3. returns. The planner thread waits for E on its own stream S, makes the plan, enqueues the work on S (with the
//    operands as borrowed views: their ordering was made at the call), and opens the gate on S after it.
//
// A plan that fails opens the gate (on S after E, else from the host) and holds its error for the caller's stream:
// the next function-form call or synchronize() on that stream raises it. Every other call plans before it returns
// (run_cached's protocol). A second call of a key being planned waits on the host for that plan, then uses it.
//
// Background planning needs eager module loading (CUDA_MODULE_LOADING=EAGER): under lazy loading, the first launch
// of a library kernel from the planner thread loads its module, which can wait for the whole device, gates included.
// For the same reason the cuFFT-based operations (FFT, RealTransform, Convolution) always plan on the caller's
// thread (run_cached_on_callers_thread): cuFFT's plan creation waits for the whole device.
// Never a hang: a job that runs longer than BackgroundPlanner::overdue_after() (plan creation that waits for the
// device while the device waits for the job's own gate) has its gate opened from the host, and so has every job
// queued behind it, each with an OrderingError held for its caller's stream; the process plans on the callers'
// threads from then on.

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/stream.hpp"
#include "plan/cache/cached_call.hpp"
#include "plan/phase.hpp"
#include "plan/planning/background_planner.hpp"
#include "runtime/access.hpp"
#include "runtime/deferred_errors.hpp"
#include "runtime/stream_gate.hpp"

namespace cuplan::detail {

/// What a call asks of planning: the mode, the call's stream option, its `after` events, the name of the function
/// ("fft") and the name the object's stream check uses ("FFT"), so that a stream of another device is reported as
/// the blocking plan phase reports it.
struct PlanningRequest {
  PlanningMode mode = PlanningMode::background;
  const std::optional<StreamRef>& stream;
  const EventList& after;
  const char* who;
  const char* stream_who;
};

/// What an operation hands the background path for one call: the value the call returns, the memory the work
/// writes (allocated on the caller's stream, or the caller's out), the operands it reads (kept alive until the work
/// is enqueued), and the work itself, enqueued on the planner's stream with the planned object.
template <class Impl, class Result>
struct BackgroundWork {
  Result result;
  Tensor written;
  std::vector<TensorRef> reads;
  std::function<void(Impl&, StreamRef)> enqueue;
};

/// The device whose stream a call may gate: the target's, for device operands with CUDA execution that does not
/// block; -1 (plan at the call) otherwise, and when `plan_at_call` (a result the call does not allocate: in place,
/// or epilog outputs besides D).
int gateable_device(const ExecutionTarget& target, bool plan_at_call = false) noexcept;

/// The result of a background call: the caller's `out` (sharing its owner, if any), else new memory of the planned
/// layout on `device`, allocated on the caller's stream.
Tensor background_result(const TensorRef* out, const Shape& shape, const Strides& strides, DType dtype, int device,
                         StreamRef caller);

/// The fault point of plan creation (fault::Site::plan): a LibraryError naming `who`, on both paths.
void plan_creation_fault_point(const char* who);
/// Raises a background planning error held for the stream this call will run on (`device`: the operands' device,
/// -1 for host operands); one atomic load when none is held.
void raise_planning_errors(const std::optional<StreamRef>& stream, int device);
/// True when a gate may be closed on `stream`: a non-blocking stream that is not capturing a graph. The legacy
/// default stream, the per-thread default stream and blocking streams synchronize with the legacy default stream,
/// where cuFFT queues part of a new plan's setup (docs/streams.md): that setup would wait for the gate, and the gate
/// for the plan.
bool stream_allows_gate(StreamRef stream);
/// Whether CUDA loads modules lazily, given the value of CUDA_MODULE_LOADING (nullptr when unset): only "EAGER"
/// loads every module at start-up; unset means lazy, the default since CUDA 12.2. Pure.
bool lazy_module_loading(const char* setting) noexcept;
/// False under lazy module loading (a library kernel's first launch from the planner thread can wait for the whole
/// device, and so for the caller's gate: logged once), and once a background job overran its time
/// (BackgroundPlanner::overdue_after): the process then plans on the callers' threads.
bool background_planning_enabled() noexcept;
/// Steps 2 of the protocol on the caller's stream, then the job for the planner thread; `plan` and `enqueue` run
/// there. Returns once the job is queued.
void submit_background_call(const PlanKey& key, int device, StreamRef caller, const EventList& after,
                            const Tensor& written, const std::vector<TensorRef>& reads, const char* who,
                            std::function<CachedPlan*(StreamRef)> plan,
                            std::function<void(CachedPlan&, StreamRef)> enqueue,
                            std::function<void(CachedPlan&)> release);

/// run_cached for an operation that always plans on the caller's thread (the cuFFT-based ones: cuFFT's plan
/// creation waits for the whole device, so it cannot run while a gate holds a stream, docs/streams.md): raises the
/// planning errors held for the call's stream first, as every function form does, then plans a miss at the call.
template <class Impl, class Construct, class Plan, class Adopt, class Run>
auto run_cached_on_callers_thread(const PlanKey& key, const PlanningRequest& request, int operand_device,
                                  Construct&& construct, Plan&& plan, Adopt&& adopt, Run&& run) {
  raise_planning_errors(request.stream, operand_device);
  PlanLease lease = try_acquire_plan(key);
  if (lease.get() == nullptr) {
    std::unique_ptr<Impl> impl = construct();
    plan_creation_fault_point(request.who);
    plan(*impl);
    lease = adopt_plan(key, std::move(impl));
  }
  return run_leased<Impl>(lease, std::forward<Adopt>(adopt), std::forward<Run>(run));
}

/// run_cached with planning off the caller's thread where the call allows it.
/// - `construct()`: the unplanned object (validates the call);
/// - `plan(impl)`: plans it on the caller's thread (today's path, `request.stream`);
/// - `plan_on(impl, stream)`: plans it on the planner's stream;
/// - `background_device(impl)`: the device whose stream may be gated, or -1 when this call must plan blocking
///   (host operands, CPU or blocking execution, a result the background path cannot allocate);
/// - `defer(impl, caller)`: the BackgroundWork of the call (allocates its result on `caller`);
/// - `adopt(impl)`, `run(impl)`: as in run_cached.
template <class Impl, class Construct, class Plan, class PlanOn, class DeviceOf, class Defer, class Adopt, class Run>
auto run_cached_planning(const PlanKey& key, const PlanningRequest& request, int operand_device, Construct&& construct,
                         Plan&& plan, PlanOn&& plan_on, DeviceOf&& background_device, Defer&& defer, Adopt&& adopt,
                         Run&& run) {
  raise_planning_errors(request.stream, operand_device);
  // A plan of this key being made serves this call too (one relaxed load when no plan is being made).
  if (request.mode == PlanningMode::background && BackgroundPlanner::any_planning())
    BackgroundPlanner::instance().wait_for_plan(key);
  PlanLease lease = try_acquire_plan(key);
  if (lease.get() == nullptr) {
    std::unique_ptr<Impl> impl = construct();
    // The operation's answer first: a call that runs on the CPU asks the CUDA runtime nothing.
    const int device = request.mode == PlanningMode::background && background_planning_enabled() && !ordering::on()
                           ? background_device(*impl)
                           : -1;
    if (device >= 0 && StreamGate::available()) {
      const DeviceScope scope(Device::cuda(device));
      const StreamRef caller = resolve_stream(request.stream, device);
      check_stream_device(caller, device, request.stream_who, "plan");
      if (stream_allows_gate(caller)) {
        auto work = std::make_shared<BackgroundWork<Impl, decltype(run(*impl))>>(defer(*impl, caller));
        auto made = std::make_shared<std::unique_ptr<Impl>>(std::move(impl));
        submit_background_call(
            key, device, caller, request.after, work->written, work->reads, request.who,
            [made, plan_on](StreamRef s) -> CachedPlan* {
              plan_on(**made, s);
              return made->release();
            },
            [work](CachedPlan& planned, StreamRef s) { work->enqueue(static_cast<Impl&>(planned), s); },
            [](CachedPlan& planned) { static_cast<Impl&>(planned).release_operand(); });
        return work->result;
      }
    }
    plan_creation_fault_point(request.who);
    plan(*impl);
    lease = adopt_plan(key, std::move(impl));
  }
  return run_leased<Impl>(lease, std::forward<Adopt>(adopt), std::forward<Run>(run));
}

}  // namespace cuplan::detail
