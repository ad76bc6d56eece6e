// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's CUDA runtime: every call answers as a runtime on a machine without a GPU does (see
// cuda_runtime_api.h next to this file).

#include "cuda_runtime_api.h"

namespace {

thread_local cudaError_t last_error = cudaSuccess;

// Every device call ends here: the error is both returned and kept for cudaGetLastError, as the runtime does.
cudaError_t no_device() noexcept {
  last_error = cudaErrorNoDevice;
  return cudaErrorNoDevice;
}

template <class T>
cudaError_t no_device(T* output) noexcept {
  if (output != nullptr) *output = T{};
  return no_device();
}

}  // namespace

cudaError_t cudaGetLastError() {
  const cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}
cudaError_t cudaPeekAtLastError() {
  return last_error;
}
const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidPitchValue:
      return "cudaErrorInvalidPitchValue";
    case cudaErrorInsufficientDriver:
      return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorPeerAccessAlreadyEnabled:
      return "cudaErrorPeerAccessAlreadyEnabled";
    case cudaErrorNotSupported:
      return "cudaErrorNotSupported";
  }
  return "cudaErrorUnknown";
}
const char* cudaGetErrorString(cudaError_t error) {
  if (error == cudaSuccess) return "no error";
  if (error == cudaErrorNoDevice) return "no CUDA device: cuplan was built without CUDA (CUPLAN_ENABLE_CUDA=OFF)";
  return "error of a CUDA runtime call (cuplan was built without CUDA: CUPLAN_ENABLE_CUDA=OFF)";
}

// A call that can only fail: its body is no_device(output), `output` the parameter it would set (if any).
#define CUPLAN_NO_DEVICE(call, ...) \
  cudaError_t call {                \
    return no_device(__VA_ARGS__);  \
  }

CUPLAN_NO_DEVICE(cudaGetDeviceCount(int* count), count)
CUPLAN_NO_DEVICE(cudaGetDevice(int* device), device)
CUPLAN_NO_DEVICE(cudaSetDevice(int))
CUPLAN_NO_DEVICE(cudaDeviceSynchronize())
CUPLAN_NO_DEVICE(cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr, int), value)
cudaError_t cudaDeviceGetStreamPriorityRange(int* least_priority, int* greatest_priority) {
  (void)no_device(least_priority);
  return no_device(greatest_priority);
}
CUPLAN_NO_DEVICE(cudaGetDeviceProperties(struct cudaDeviceProp* prop, int), prop)
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  (void)no_device(free);
  return no_device(total);
}

CUPLAN_NO_DEVICE(cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int), stream)
CUPLAN_NO_DEVICE(cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int, int), stream)
CUPLAN_NO_DEVICE(cudaStreamDestroy(cudaStream_t))
CUPLAN_NO_DEVICE(cudaStreamSynchronize(cudaStream_t))
CUPLAN_NO_DEVICE(cudaStreamQuery(cudaStream_t))
CUPLAN_NO_DEVICE(cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int))
CUPLAN_NO_DEVICE(cudaStreamGetDevice(cudaStream_t, int* device), device)
CUPLAN_NO_DEVICE(cudaStreamGetPriority(cudaStream_t, int* priority), priority)
CUPLAN_NO_DEVICE(cudaStreamIsCapturing(cudaStream_t, enum cudaStreamCaptureStatus* status), status)
CUPLAN_NO_DEVICE(cudaStreamGetFlags(cudaStream_t, unsigned int* flags), flags)
CUPLAN_NO_DEVICE(cudaStreamBeginCapture(cudaStream_t, enum cudaStreamCaptureMode))
CUPLAN_NO_DEVICE(cudaStreamEndCapture(cudaStream_t, cudaGraph_t* graph), graph)
CUPLAN_NO_DEVICE(cudaEventCreate(cudaEvent_t* event), event)
CUPLAN_NO_DEVICE(cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int), event)
CUPLAN_NO_DEVICE(cudaEventDestroy(cudaEvent_t))
CUPLAN_NO_DEVICE(cudaEventRecord(cudaEvent_t, cudaStream_t))
CUPLAN_NO_DEVICE(cudaEventQuery(cudaEvent_t))
CUPLAN_NO_DEVICE(cudaEventSynchronize(cudaEvent_t))
CUPLAN_NO_DEVICE(cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t), ms)

CUPLAN_NO_DEVICE(cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t, unsigned long long), exec)
CUPLAN_NO_DEVICE(cudaGraphLaunch(cudaGraphExec_t, cudaStream_t))
CUPLAN_NO_DEVICE(cudaGraphExecDestroy(cudaGraphExec_t))
CUPLAN_NO_DEVICE(cudaGraphDestroy(cudaGraph_t))

CUPLAN_NO_DEVICE(cudaMalloc(void** ptr, size_t), ptr)
CUPLAN_NO_DEVICE(cudaFree(void*))
CUPLAN_NO_DEVICE(cudaMallocHost(void** ptr, size_t), ptr)
CUPLAN_NO_DEVICE(cudaFreeHost(void*))
CUPLAN_NO_DEVICE(cudaMallocManaged(void** ptr, size_t, unsigned int), ptr)
CUPLAN_NO_DEVICE(cudaMallocAsync(void** ptr, size_t, cudaStream_t), ptr)
CUPLAN_NO_DEVICE(cudaFreeAsync(void*, cudaStream_t))
CUPLAN_NO_DEVICE(cudaMemPoolCreate(cudaMemPool_t* pool, const struct cudaMemPoolProps*), pool)
CUPLAN_NO_DEVICE(cudaMallocFromPoolAsync(void** ptr, size_t, cudaMemPool_t, cudaStream_t), ptr)
CUPLAN_NO_DEVICE(cudaMemPoolGetAttribute(cudaMemPool_t, enum cudaMemPoolAttr, void*))
CUPLAN_NO_DEVICE(cudaMemPoolSetAttribute(cudaMemPool_t, enum cudaMemPoolAttr, void*))
CUPLAN_NO_DEVICE(cudaMemPoolTrimTo(cudaMemPool_t, size_t))
CUPLAN_NO_DEVICE(cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void*), attributes)
CUPLAN_NO_DEVICE(cudaMemcpyAsync(void*, const void*, size_t, enum cudaMemcpyKind, cudaStream_t))
CUPLAN_NO_DEVICE(cudaMemcpy2DAsync(void*, size_t, const void*, size_t, size_t, size_t, enum cudaMemcpyKind,
                                   cudaStream_t))
CUPLAN_NO_DEVICE(cudaMemcpyPeerAsync(void*, int, const void*, int, size_t, cudaStream_t))
CUPLAN_NO_DEVICE(cudaMemsetAsync(void*, int, size_t, cudaStream_t))
CUPLAN_NO_DEVICE(cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t, void*))

#undef CUPLAN_NO_DEVICE
