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

cudaError_t cudaGetDeviceCount(int* count) {
  return no_device(count);
}
cudaError_t cudaGetDevice(int* device) {
  return no_device(device);
}
cudaError_t cudaSetDevice(int) {
  return no_device();
}
cudaError_t cudaDeviceSynchronize() {
  return no_device();
}
cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr, int) {
  return no_device(value);
}
cudaError_t cudaDeviceGetStreamPriorityRange(int* least_priority, int* greatest_priority) {
  (void)no_device(least_priority);
  return no_device(greatest_priority);
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int) {
  return no_device(prop);
}
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  (void)no_device(free);
  return no_device(total);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  return no_device(stream);
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int, int) {
  return no_device(stream);
}
cudaError_t cudaStreamDestroy(cudaStream_t) {
  return no_device();
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  return no_device();
}
cudaError_t cudaStreamQuery(cudaStream_t) {
  return no_device();
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) {
  return no_device();
}
cudaError_t cudaStreamGetDevice(cudaStream_t, int* device) {
  return no_device(device);
}
cudaError_t cudaStreamGetPriority(cudaStream_t, int* priority) {
  return no_device(priority);
}
cudaError_t cudaStreamIsCapturing(cudaStream_t, enum cudaStreamCaptureStatus* status) {
  return no_device(status);
}
cudaError_t cudaStreamGetFlags(cudaStream_t, unsigned int* flags) {
  return no_device(flags);
}
cudaError_t cudaStreamBeginCapture(cudaStream_t, enum cudaStreamCaptureMode) {
  return no_device();
}
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* graph) {
  return no_device(graph);
}
cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return no_device(event);
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  return no_device(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t) {
  return no_device();
}
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) {
  return no_device();
}
cudaError_t cudaEventQuery(cudaEvent_t) {
  return no_device();
}
cudaError_t cudaEventSynchronize(cudaEvent_t) {
  return no_device();
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  return no_device(ms);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t, unsigned long long) {
  return no_device(exec);
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) {
  return no_device();
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) {
  return no_device();
}
cudaError_t cudaGraphDestroy(cudaGraph_t) {
  return no_device();
}

cudaError_t cudaMalloc(void** ptr, size_t) {
  return no_device(ptr);
}
cudaError_t cudaFree(void*) {
  return no_device();
}
cudaError_t cudaMallocHost(void** ptr, size_t) {
  return no_device(ptr);
}
cudaError_t cudaFreeHost(void*) {
  return no_device();
}
cudaError_t cudaMallocManaged(void** ptr, size_t, unsigned int) {
  return no_device(ptr);
}
cudaError_t cudaMallocAsync(void** ptr, size_t, cudaStream_t) {
  return no_device(ptr);
}
cudaError_t cudaFreeAsync(void*, cudaStream_t) {
  return no_device();
}
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const struct cudaMemPoolProps*) {
  return no_device(pool);
}
cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t, cudaMemPool_t, cudaStream_t) {
  return no_device(ptr);
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t, enum cudaMemPoolAttr, void*) {
  return no_device();
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, enum cudaMemPoolAttr, void*) {
  return no_device();
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) {
  return no_device();
}
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void*) {
  return no_device(attributes);
}
cudaError_t cudaMemcpyAsync(void*, const void*, size_t, enum cudaMemcpyKind, cudaStream_t) {
  return no_device();
}
cudaError_t cudaMemcpy2DAsync(void*, size_t, const void*, size_t, size_t, size_t, enum cudaMemcpyKind, cudaStream_t) {
  return no_device();
}
cudaError_t cudaMemcpyPeerAsync(void*, int, const void*, int, size_t, cudaStream_t) {
  return no_device();
}
cudaError_t cudaMemsetAsync(void*, int, size_t, cudaStream_t) {
  return no_device();
}
cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t, void*) {
  return no_device();
}
