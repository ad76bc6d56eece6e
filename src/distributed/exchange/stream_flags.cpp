// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/stream_flags.hpp"

#include <cuda.h>

#include <mutex>

#include <fmt/format.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail::dist {
namespace {

using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using WriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

using DeviceGetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);

struct DriverFunctions {
  WaitValue32 wait = nullptr;
  WriteValue32 write = nullptr;
  DeviceGetAttribute attribute = nullptr;
};

// Through the runtime's entry-point query, so that the library does not link the driver library itself.
const DriverFunctions& driver() {
  static DriverFunctions functions;
  static std::once_flag once;
  std::call_once(once, [] {
    auto load = [](const char* symbol, void** function) {
      cudaDriverEntryPointQueryResult found{};
      const cudaError_t status = cudaGetDriverEntryPointByVersion(symbol, function, 12000, cudaEnableDefault, &found);
      if (status != cudaSuccess || found != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        *function = nullptr;
      }
    };
    load("cuStreamWaitValue32", reinterpret_cast<void**>(&functions.wait));
    load("cuStreamWriteValue32", reinterpret_cast<void**>(&functions.write));
    load("cuDeviceGetAttribute", reinterpret_cast<void**>(&functions.attribute));
  });
  return functions;
}

void check(CUresult status, const char* call) {
  if (status != CUDA_SUCCESS)
    throw LibraryError("CUDA driver", call, static_cast<int>(status), "CUresult",
                       fmt::format("{} failed with CUresult {}", call, static_cast<int>(status)));
}

}  // namespace

void wait_flag_at_least(cudaStream_t stream, const std::uint32_t* flag, std::uint32_t value, bool flush) {
  const DriverFunctions& d = driver();
  if (d.wait == nullptr) throw NotSupported("CUDA driver: cuStreamWaitValue32 is not available");
  const unsigned flags = static_cast<unsigned>(CU_STREAM_WAIT_VALUE_GEQ) |
                         (flush ? static_cast<unsigned>(CU_STREAM_WAIT_VALUE_FLUSH) : 0u);
  check(d.wait(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(flag), value, flags),
        "cuStreamWaitValue32");
}

bool can_flush_remote_writes(int device) {
  const DriverFunctions& d = driver();
  int value = 0;
  return d.attribute != nullptr &&
         d.attribute(&value, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, static_cast<CUdevice>(device)) ==
             CUDA_SUCCESS &&
         value != 0;
}

void write_flag(cudaStream_t stream, std::uint32_t* flag, std::uint32_t value) {
  const DriverFunctions& d = driver();
  if (d.write == nullptr) throw NotSupported("CUDA driver: cuStreamWriteValue32 is not available");
  check(d.write(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(flag), value,
                CU_STREAM_WRITE_VALUE_DEFAULT),
        "cuStreamWriteValue32");
}

}  // namespace cuplan::detail::dist
