// SPDX-License-Identifier: Apache-2.0
// cuplan::Communicator over NCCL's communicator calls.
#include <nccl.h>

#include <cstring>

#include <fmt/format.h>

#include "cuplan/distributed.hpp"
#include "cuplan/errors.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/nccl_check.hpp"

namespace cuplan {

static_assert(Communicator::unique_id_bytes == NCCL_UNIQUE_ID_BYTES);

struct Communicator::State {
  ncclComm_t comm = nullptr;
  bool owning = false;
  int rank = 0;
  int size = 0;
  int device = 0;
  ~State() {
    if (owning && comm != nullptr) CUPLAN_NCCL_CHECK_NOEXCEPT(ncclCommDestroy(comm));
  }
};

namespace {
std::shared_ptr<Communicator::State> read_state(ncclComm_t comm, bool owning) {
  auto state = std::make_shared<Communicator::State>();
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
  return state_->comm;
}
bool Communicator::owning() const {
  return state_->owning;
}

}  // namespace cuplan
