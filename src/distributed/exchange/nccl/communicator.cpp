// SPDX-License-Identifier: Apache-2.0
// cuplan::Communicator over NCCL's communicator calls.
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "cuplan/distributed.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/comm_state.hpp"
#include "distributed/exchange/nccl/nccl_check.hpp"

namespace cuplan {

static_assert(Communicator::unique_id_bytes == NCCL_UNIQUE_ID_BYTES);

namespace {
// CUPLAN_DISTRIBUTED_TIMEOUT_MS: the timeout of every new communicator, in milliseconds (0 or unset: none). Read
// once; a value that is not a whole number of milliseconds is logged and ignored.
std::chrono::milliseconds default_timeout() {
  static const std::chrono::milliseconds timeout = [] {
    const char* value = std::getenv("CUPLAN_DISTRIBUTED_TIMEOUT_MS");
    if (value == nullptr || *value == '\0') return std::chrono::milliseconds(0);
    char* end = nullptr;
    const long long ms = std::strtoll(value, &end, 10);
    if (*end != '\0' || ms < 0) {
      log_message(LogLevel::warning,
                  fmt::format("CUPLAN_DISTRIBUTED_TIMEOUT_MS: expected a whole number of milliseconds (0: no "
                              "timeout), got '{}'; no timeout",
                              value));
      return std::chrono::milliseconds(0);
    }
    return std::chrono::milliseconds(ms);
  }();
  return timeout;
}

std::shared_ptr<Communicator::State> read_state(ncclComm_t comm, bool owning) {
  auto state = std::make_shared<Communicator::State>();
  state->set_timeout(default_timeout());
  state->comm = comm;
  state->owning = owning;
  CUPLAN_NCCL_CHECK(ncclCommUserRank(comm, &state->rank));
  CUPLAN_NCCL_CHECK(ncclCommCount(comm, &state->size));
  CUPLAN_NCCL_CHECK(ncclCommCuDevice(comm, &state->device));
  return state;
}
}  // namespace

Communicator::Communicator(ncclComm* comm) {
  if (comm == nullptr) throw InvalidArgument("Communicator: expected an initialised ncclComm_t, got nullptr");
  state_ = read_state(comm, false);
}

Communicator::Communicator(std::shared_ptr<State> state) : state_(std::move(state)) {}

Communicator::UniqueId Communicator::unique_id() {
  ncclUniqueId id;
  CUPLAN_NCCL_CHECK(ncclGetUniqueId(&id));
  UniqueId out;
  std::memcpy(out.data(), id.internal, out.size());
  return out;
}

Communicator Communicator::from_unique_id(const UniqueId& id, int rank, int size, Device device) {
  if (size < 1) throw InvalidArgument(fmt::format("from_unique_id: size must be at least 1, got {}", size));
  if (rank < 0 || rank >= size)
    throw InvalidArgument(fmt::format("from_unique_id: rank must be in [0, {}), got {}", size, rank));
  if (!device.is_cuda())
    throw InvalidArgument(fmt::format("from_unique_id: device must be a CUDA device, got {}", device.to_string()));
  device.check_valid("from_unique_id: device");
  ncclUniqueId nid;
  std::memcpy(nid.internal, id.data(), id.size());
  detail::dist::DeviceGuard guard(device.index());
  ncclComm_t comm = nullptr;
  CUPLAN_NCCL_CHECK(ncclCommInitRank(&comm, size, nid, rank));
  try {
    return Communicator(read_state(comm, true));
  } catch (...) {
    CUPLAN_NCCL_CHECK_NOEXCEPT(ncclCommDestroy(comm));
    throw;
  }
}

std::vector<Communicator> Communicator::local_all(std::span<const int> devices) {
  if (devices.empty()) throw InvalidArgument("local_all: expected at least one device, got none");
  // One rank per GPU: NCCL refuses a device twice only once it has started, with an error naming no device.
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (devices[i] == devices[j])
        throw InvalidArgument(
            fmt::format("local_all: devices: expected distinct devices (one rank per GPU), got "
                        "device {} at positions {} and {}",
                        devices[i], j, i));
  for (int d : devices) Device::cuda(d).check_valid("local_all: device");
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  CUPLAN_NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  std::vector<Communicator> out;
  out.reserve(devices.size());
  std::size_t wrapped = 0;
  try {
    for (; wrapped < comms.size(); ++wrapped) out.push_back(Communicator(read_state(comms[wrapped], true)));
  } catch (...) {
    for (std::size_t i = wrapped + 1; i < comms.size(); ++i) CUPLAN_NCCL_CHECK_NOEXCEPT(ncclCommDestroy(comms[i]));
    throw;
  }
  return out;
}

int Communicator::rank() const {
  return state_->rank;
}
int Communicator::size() const {
  return state_->size;
}
Device Communicator::device() const {
  return Device::cuda(state_->device);
}
ncclComm* Communicator::native() const {
  return state_->live("Communicator::native");
}
bool Communicator::owning() const {
  return state_->owning;
}

void Communicator::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0)
    throw InvalidArgument(fmt::format("Communicator::set_timeout: expected 0 (no timeout) or more milliseconds, got {}",
                                      timeout.count()));
  state_->set_timeout(timeout);
}
std::chrono::milliseconds Communicator::timeout() const {
  return state_->timeout();
}
void Communicator::abort() noexcept {
  state_->abort(State::Cause::user,
                fmt::format("Communicator::abort() was called on rank {} of {}", state_->rank, state_->size));
}
bool Communicator::aborted() const noexcept {
  return state_->aborted();
}
std::string Communicator::abort_reason() const {
  return state_->reason();
}

}  // namespace cuplan
