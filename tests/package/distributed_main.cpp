// SPDX-License-Identifier: Apache-2.0
// Consumer of an installed cuplan's distributed component (cuplan::distributed): includes its three headers (and no
// formatter), checks arguments the way a rank does before it has a GPU or a peer, and reads the typed errors. Exits
// 0 when every check holds. Without a GPU a communicator on a CUDA device is NotSupported; with one, a one-rank
// communicator reports its rank, size and device.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed.hpp>
#include <cuplan/distributed_matmul.hpp>
#include <cuplan/redistribute.hpp>

// As with the umbrella header: formatting the distributed types is opt-in (cuplan/distributed_format.hpp).
#ifdef FMT_VERSION
#error "a distributed header includes fmt; its formatters belong to cuplan/distributed_format.hpp"
#endif

namespace cp = cuplan;

// True when `call` raises `Expected` with a message that names `word`.
template <class Expected, class Call>
bool raises(Call call, const char* word) {
  try {
    call();
  } catch (const Expected& error) {
    std::printf("  (message: %s)\n", error.what());
    return std::string(error.what()).find(word) != std::string::npos;
  } catch (const std::exception& error) {
    std::printf("  (another error: %s)\n", error.what());
  }
  return false;
}

int main() {
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += ok ? 0 : 1;
  };
  expect(cp::to_string(cp::ExchangeMethod::copy_engine) == "copy_engine" &&
             cp::to_string(cp::Decomposition::pencil) == "pencil" &&
             cp::to_string(cp::DistributedMatmulAlgorithm::allgather_gemm) == "allgather_gemm",
         "the enums have their names without fmt");

  // Arguments a rank checks alone, before any NCCL call: each raises on its own, so that no rank waits for another.
  const cp::Communicator::UniqueId id{};
  expect(raises<cp::InvalidArgument>([&] { (void)cp::Communicator::from_unique_id(id, 2, 2, cp::Device::cuda(0)); },
                                     "rank"),
         "a rank past the size is InvalidArgument naming the rank");
  expect(raises<cp::InvalidArgument>([&] { (void)cp::Communicator::from_unique_id(id, 0, 0, cp::Device::cuda(0)); },
                                     "size"),
         "a size of 0 is InvalidArgument naming the size");
  expect(raises<cp::InvalidArgument>([&] { (void)cp::Communicator::from_unique_id(id, 0, 1, cp::Device::cpu()); },
                                     "device"),
         "a CPU device is InvalidArgument naming the device");
  expect(raises<cp::InvalidArgument>([&] { (void)cp::Communicator::local_all(std::vector<int>{}); }, "device"),
         "local_all without devices is InvalidArgument");
  expect(raises<cp::InvalidArgument>(
             [&] {
               (void)cp::Communicator::local_all(std::vector<int>{0, 1, 0});
             },
             "device 0 at positions 0 and 2"),
         "local_all with a device twice is InvalidArgument naming it");
  expect(raises<cp::InvalidArgument>([&] { (void)cp::Communicator(static_cast<ncclComm*>(nullptr)); }, "nullptr"),
         "a null ncclComm_t is InvalidArgument");

  const std::vector<int> device_zero{0};
  if (!cp::cuda_available()) {
    expect(raises<cp::NotSupported>([&] { (void)cp::Communicator::local_all(device_zero); }, "CUDA"),
           "without a GPU, a communicator on cuda:0 is NotSupported");
  } else {
    auto comms = cp::Communicator::local_all(device_zero);
    expect(comms.size() == 1 && comms[0].rank() == 0 && comms[0].size() == 1 &&
               comms[0].device() == cp::Device::cuda(0) && comms[0].owning() && !comms[0].aborted(),
           "a one-rank communicator on cuda:0");
    expect(raises<cp::InvalidArgument>([&] { comms[0].set_timeout(std::chrono::milliseconds(-1)); }, "-1"),
           "a negative timeout is InvalidArgument naming the value");
  }
  return failures == 0 ? 0 : 1;
}
