// SPDX-License-Identifier: Apache-2.0
// The runtime's copy primitive: any two memory spaces and layouts, stream-ordered, following the blocking rule of
// docs/getting-started.md. The public cuplan::copy (src/plan/staging/copy.cpp) sends large pageable host <-> device
// copies through the staging engine and everything else here.
//
// Order of preference once a GPU is involved: one cudaMemcpyAsync when the reduced copy is one contiguous block,
// one cudaMemcpy2DAsync when it is pitched rows, otherwise the strided copy kernel on the device (directly for
// device -> device; through a dense device temporary and a dense host staging buffer packed or unpacked on the CPU
// when a host side is involved).

#include <fmt/format.h>

#include <cstdint>

#include "base/cuda_check.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/copy.hpp"
#include "runtime/copy_kernels.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/storage.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

using detail::CopyGeometry;

bool device_side(const TensorView& view) noexcept {
  return view.memory_space() == MemorySpace::device || view.memory_space() == MemorySpace::managed;
}

}  // namespace

}  // namespace CUPLAN_ABI_NAMESPACE

void detail::check_copy_operands(const TensorView& src, const TensorView& dst) {
  if (src.dtype() != dst.dtype()) {
    throw InvalidArgument(
        fmt::format("copy: dst has dtype {}, expected {} (the dtype of src)", dst.dtype(), src.dtype()));
  }
  if (src.shape() != dst.shape()) {
    throw InvalidArgument(
        fmt::format("copy: dst has shape {}, expected {} (the shape of src)", dst.shape(), src.shape()));
  }
  detail::check_writable(dst, "dst", "copy");
  detail::check_non_overlapping(dst, "dst", "copy");
}

inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

// Largest word (up to 8 bytes) that divides the element size and both base addresses, so that every access of the
// kernel is aligned even for views at odd offsets.
int word_size_for(std::size_t element_size, const void* a, const void* b) noexcept {
  const auto bits = element_size | reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b);
  int word = 8;
  while (word > 1 && (bits % static_cast<std::uintptr_t>(word)) != 0) word /= 2;
  return word;
}

void launch_kernel(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size, cudaStream_t stream) {
  detail::StridedCopyArgs args;
  args.src = src;
  args.dst = dst;
  args.word_size = word_size_for(element_size, src, dst);
  args.geometry = g;
  const auto words = static_cast<std::int64_t>(element_size) / args.word_size;
  if (words > 1) {
    // An element becomes an innermost axis of `words` contiguous words.
    CopyGeometry& wg = args.geometry;
    for (int axis = 0; axis < wg.rank; ++axis) {
      wg.src_strides[axis] *= words;
      wg.dst_strides[axis] *= words;
    }
    wg.shape[wg.rank] = words;
    wg.src_strides[wg.rank] = 1;
    wg.dst_strides[wg.rank] = 1;
    ++wg.rank;
    wg.numel *= words;
  }
  CUPLAN_CUDA_CHECK(detail::launch_strided_copy(args, stream));
}

// One cudaMemcpyAsync or cudaMemcpy2DAsync when the reduced copy allows it; false otherwise.
bool try_memcpy(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size, cudaStream_t stream) {
  if (detail::is_single_block(g)) {
    CUPLAN_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, static_cast<std::size_t>(g.numel) * element_size, cudaMemcpyDefault, stream));
    return true;
  }
  if (detail::is_pitched_2d(g)) {
    const cudaError_t status = cudaMemcpy2DAsync(dst, static_cast<std::size_t>(g.dst_strides[0]) * element_size, src,
                                                 static_cast<std::size_t>(g.src_strides[0]) * element_size,
                                                 static_cast<std::size_t>(g.shape[1]) * element_size,
                                                 static_cast<std::size_t>(g.shape[0]), cudaMemcpyDefault, stream);
    if (status == cudaErrorInvalidPitchValue) {  // pitch beyond the device limit: the kernel path handles it
      (void)cudaGetLastError();
      return false;
    }
    CUPLAN_CUDA_CHECK(status);
    return true;
  }
  return false;
}

// Host -> device for layouts no memcpy form covers. The host side is packed on the CPU into a dense staging
// buffer laid out like dst when dst is dense (then one memcpy finishes), else row-major for a device scatter.
void staged_host_to_device(const TensorView& src, const TensorView& dst, StreamRef stream) {
  const std::size_t element_size = src.dtype().size();
  const std::size_t bytes = static_cast<std::size_t>(src.numel()) * element_size;
  auto staging = detail::Storage::allocate(bytes, Device::cpu(), MemorySpace::host_pageable, StreamRef{});
  if (detail::is_dense(dst.shape(), dst.strides())) {
    detail::copy_strided_host(detail::reduce_copy(src.shape(), src.strides(), dst.strides()), src.data(),
                              staging->data(), element_size);
    CUPLAN_CUDA_CHECK(cudaMemcpyAsync(dst.data(), staging->data(), bytes, cudaMemcpyDefault, stream.native()));
    CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream.native()));
    return;
  }
  const Strides dense = row_major_strides(src.shape());
  detail::copy_strided_host(detail::reduce_copy(src.shape(), src.strides(), dense), src.data(), staging->data(),
                            element_size);
  auto temporary = detail::Storage::allocate(bytes, Device::cuda(stream.device().index()), MemorySpace::device, stream);
  CUPLAN_CUDA_CHECK(cudaMemcpyAsync(temporary->data(), staging->data(), bytes, cudaMemcpyDefault, stream.native()));
  launch_kernel(detail::reduce_copy(src.shape(), dense, dst.strides()), temporary->data(), dst.data(), element_size,
                stream.native());
  CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream.native()));
}

// Device -> host for layouts no memcpy form covers: the device side is brought over densely (as it lies when it
// is dense, else gathered row-major by the kernel), then unpacked into dst on the CPU.
void staged_device_to_host(const TensorView& src, const TensorView& dst, StreamRef stream) {
  const std::size_t element_size = src.dtype().size();
  const std::size_t bytes = static_cast<std::size_t>(src.numel()) * element_size;
  auto staging = detail::Storage::allocate(bytes, Device::cpu(), MemorySpace::host_pageable, StreamRef{});
  Strides staged_strides = src.strides();
  if (detail::is_dense(src.shape(), src.strides())) {
    CUPLAN_CUDA_CHECK(cudaMemcpyAsync(staging->data(), src.data(), bytes, cudaMemcpyDefault, stream.native()));
  } else {
    staged_strides = row_major_strides(src.shape());
    auto temporary =
        detail::Storage::allocate(bytes, Device::cuda(stream.device().index()), MemorySpace::device, stream);
    launch_kernel(detail::reduce_copy(src.shape(), src.strides(), staged_strides), src.data(), temporary->data(),
                  element_size, stream.native());
    CUPLAN_CUDA_CHECK(cudaMemcpyAsync(staging->data(), temporary->data(), bytes, cudaMemcpyDefault, stream.native()));
  }
  CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream.native()));
  detail::copy_strided_host(detail::reduce_copy(src.shape(), staged_strides, dst.strides()), staging->data(),
                            dst.data(), element_size);
}

}  // namespace

}  // namespace CUPLAN_ABI_NAMESPACE

StreamRef detail::copy_stream(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream) {
  const bool dst_on_device = device_side(dst);
  const Device work_device = dst_on_device ? dst.device() : src.device();
  if (!cuda_available()) detail::require_cuda(fmt::format("copy involving {} memory", work_device).c_str());
  const StreamRef on = stream ? *stream : current_stream(work_device);
  const Device stream_device = copy_stream_device(src, dst, on);
  if (!(device_side(src) && stream_device == src.device()) && !(dst_on_device && stream_device == dst.device())) {
    throw InvalidArgument(fmt::format("copy: stream belongs to {}, expected a stream of {} (the device of {})",
                                      stream_device, work_device, dst_on_device ? "dst" : "src"));
  }
  return on;
}

Device detail::copy_stream_device(const TensorView& src, const TensorView& dst, StreamRef stream) {
  const Device work_device = device_side(dst) ? dst.device() : src.device();
  return detail::is_default_stream_handle(stream.native()) ? work_device : stream.device();
}

void detail::copy_primitive(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream,
                            const TensorRef* src_owner, const TensorRef* dst_owner) {
  check_copy_operands(src, dst);
  if (src.numel() == 0 || detail::same_elements(src, dst)) return;  // nothing to move
  if (detail::views_overlap(src, dst)) {
    // Like memmove: the source is read completely (into a dense temporary) before any element of dst is written.
    const Device where = device_side(src) ? src.device() : Device::cpu();
    const Tensor temporary = Tensor::empty(src.shape(), src.dtype(), where, device_side(src) ? stream : std::nullopt);
    const TensorRef temporary_ref(temporary);
    copy_primitive(src, temporary.view(), stream, src_owner, &temporary_ref);
    copy_primitive(temporary.view(), dst, stream, &temporary_ref, dst_owner);
    return;
  }
  const std::size_t element_size = src.dtype().size();
  const bool src_on_device = device_side(src);
  const bool dst_on_device = device_side(dst);

  if (!src_on_device && !dst_on_device) {
    // Host memory that earlier GPU work on the given stream may still write: honour that order first.
    if (stream && cuda_available()) CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream->native()));
    detail::copy_strided_host(detail::reduce_copy(src.shape(), src.strides(), dst.strides()), src.data(), dst.data(),
                              element_size);
    return;
  }

  const StreamRef on = copy_stream(src, dst, stream);
  DeviceScope scope(copy_stream_device(src, dst, on));
  const CopyGeometry g = detail::reduce_copy(src.shape(), src.strides(), dst.strides());

  if (src_on_device && dst_on_device) {
    if (src.device() != dst.device()) {
      if (!detail::is_single_block(g)) {
        throw NotSupported(fmt::format(
            "copy: between {} and {} the layouts must reduce to one contiguous block on both sides, got src "
            "strides {} and dst strides {} for shape {}; make one side contiguous on its own device first",
            src.device(), dst.device(), src.strides(), dst.strides(), src.shape()));
      }
      CUPLAN_CUDA_CHECK(cudaMemcpyPeerAsync(dst.data(), dst.device().index(), src.data(), src.device().index(),
                                            static_cast<std::size_t>(g.numel) * element_size, on.native()));
    } else if (!try_memcpy(g, src.data(), dst.data(), element_size, on.native())) {
      launch_kernel(g, src.data(), dst.data(), element_size, on.native());
    }
    // Device -> device returns at once: owned operands must outlive the enqueued work.
    if (src_owner) src_owner->record_stream(on);
    if (dst_owner) dst_owner->record_stream(on);
    return;
  }

  // A host side is involved: blocking, so nothing needs recording once the stream is synchronised.
  if (try_memcpy(g, src.data(), dst.data(), element_size, on.native())) {
    CUPLAN_CUDA_CHECK(cudaStreamSynchronize(on.native()));
  } else if (dst_on_device) {
    staged_host_to_device(src, dst, on);
  } else {
    staged_device_to_host(src, dst, on);
  }
}
}  // namespace cuplan
