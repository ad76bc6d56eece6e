// SPDX-License-Identifier: Apache-2.0
// cuplan::copy (cuplan/tensor.hpp). Large copies between pageable host memory and device memory go through the
// staging engine: host threads copy into pinned slots while the previous slot's DMA runs, which is several times
// faster than the driver's own staging of pageable memory. Everything else is the runtime's copy primitive.

#include <cuda_runtime_api.h>

#include <mutex>

#include "base/geometry.hpp"
#include "base/nvtx.hpp"
#include "cuplan/tensor.hpp"
#include "plan/ordering/ordering_checker.hpp"
#include "plan/ordering/tensor_accesses.hpp"
#include "plan/staging/chunk_grid.hpp"
#include "plan/staging/chunking.hpp"
#include "plan/staging/pipeline.hpp"
#include "plan/staging/staged_copy.hpp"
#include "runtime/access.hpp"
#include "runtime/copy.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/storage.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

using detail::staging::ChunkParts;
using detail::staging::HostPart;

// Below this the driver's pageable copy costs about as much as the staged copier's first host copy.
constexpr std::size_t staged_bytes = std::size_t{4} << 20;
// One chunk: a DMA of this size runs near PCIe peak, and three of them in pinned memory are a modest footprint.
constexpr std::int64_t chunk_bytes = std::int64_t{16} << 20;

// The staged copier of the copy function: its pinned slots are kept for the life of the process (pinning costs
// milliseconds per call otherwise). One copy at a time; a concurrent copy takes the primitive.
struct StagedCopier {
  std::mutex mutex;
  detail::staging::StagingPipeline pipeline;
};
StagedCopier& copier() {
  static StagedCopier* e = new StagedCopier;  // leaked on purpose: copies may run from static destructors
  return *e;
}

bool device_side(const TensorView& view) noexcept {
  return view.memory_space() == MemorySpace::device || view.memory_space() == MemorySpace::managed;
}

bool worth_staging(const TensorView& src, const TensorView& dst) {
  const bool h2d = src.memory_space() == MemorySpace::host_pageable && dst.memory_space() == MemorySpace::device;
  const bool d2h = src.memory_space() == MemorySpace::device && dst.memory_space() == MemorySpace::host_pageable;
  if (!h2d && !d2h) return false;
  if (static_cast<std::size_t>(src.numel()) * src.dtype().size() < staged_bytes) return false;
  return detail::is_single_block(detail::reduce_copy(src.shape(), src.strides(), dst.strides()));
}

// The contiguous block of `view` (one block by worth_staging) as bytes.
std::byte* first_byte(const TensorView& view) {
  return static_cast<std::byte*>(view.data());
}

void staged_copy(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream,
                 const TensorRef* src_owner, const TensorRef* dst_owner) {
  detail::check_copy_operands(src, dst);
  if (src.numel() == 0 || !worth_staging(src, dst)) {
    detail::copy_primitive(src, dst, stream, src_owner, dst_owner);
    return;
  }
  const StreamRef on = detail::copy_stream(src, dst, stream);
  StagedCopier& e = copier();
  std::unique_lock lock(e.mutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    detail::copy_primitive(src, dst, stream, src_owner, dst_owner);
    return;
  }
  detail::NvtxRange range("cuplan::copy (staged)");
  const Device device = detail::copy_stream_device(src, dst, on);
  DeviceScope scope(device);
  const bool h2d = dst.memory_space() == MemorySpace::device;
  const std::size_t bytes = static_cast<std::size_t>(src.numel()) * src.dtype().size();
  // A layout that reduces to one block may still start anywhere its lowest-address element is: with positive unit
  // strides that is data().
  std::byte* host = first_byte(h2d ? src : dst);
  std::byte* device_bytes = first_byte(h2d ? dst : src);
  // The bytes in chunks of chunk_bytes, the last one shorter: a one-axis grid of bytes.
  const auto units = static_cast<std::int64_t>(bytes);
  const detail::staging::ChunkGrid grid(
      Shape{units}, {}, 0, detail::staging::fixed_chunks(units, chunk_bytes, "cuplan::copy"), "cuplan::copy");
  detail::staging::PipelineRun run;
  run.device = device.index();
  run.caller = on;
  run.chunks = grid.count();
  // All three slots even for fewer chunks: the copier keeps its slots for the next copies.
  run.slots = detail::staging::max_slots;
  (h2d ? run.in_host_bytes : run.out_host_bytes) = static_cast<std::size_t>(grid.split().chunk);
  run.parts = [&](std::int64_t i) {
    const std::int64_t begin = grid.offset(i, Strides{1});
    HostPart part{
        TensorView(host + begin, i8, Shape{grid.range(i).size}, Strides{1}, Device::cpu(), MemorySpace::host_pageable),
        Strides{1}};
    ChunkParts parts;
    if (h2d) {
      parts.in = part;
      parts.in_device = device_bytes + begin;
    } else {
      parts.out = part;
      parts.out_device = device_bytes + begin;
    }
    return parts;
  };
  e.pipeline.run(run);
}

// The range of one copy, named by its direction (constant names: nothing is formatted per call).
const char* copy_range_name(const TensorView& src, const TensorView& dst) noexcept {
  if (src.on_host()) return dst.on_host() ? "cuplan::copy host to host" : "cuplan::copy host to device";
  return dst.on_host() ? "cuplan::copy device to host" : "cuplan::copy device to device";
}

// The copy as one call: cuplan Tensors among src and dst are ordered after their pending producers on the copy's
// stream (TensorAccesses), and the ordering checker, when on, checks src read and dst written there.
void copy_checked(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream,
                  const TensorRef* src_owner, const TensorRef* dst_owner) {
  detail::NvtxRange range(copy_range_name(src, dst));
  detail::TensorAccesses accesses;
  detail::CheckedUses uses;
  detail::Storage* src_storage = src_owner != nullptr ? detail::Access::storage(*src_owner).get() : nullptr;
  detail::Storage* dst_storage = dst_owner != nullptr ? detail::Access::storage(*dst_owner).get() : nullptr;
  // Owned device memory is ordered after its producer whatever the other side: a blocking read on another stream
  // must see the write. Host memory has no pending producer (cuplan's calls have finished with it when they return).
  const bool device_involved = device_side(src) || device_side(dst);
  const bool order = device_involved && (src_storage != nullptr || dst_storage != nullptr);
  // Pageable to pageable is a plain host copy at the call: nothing for the checker (and no stream to look up).
  const bool check = detail::ordering::on() && (src.memory_space() != MemorySpace::host_pageable ||
                                                dst.memory_space() != MemorySpace::host_pageable);
  std::optional<StreamRef> resolved = stream;  // the copy's stream once looked up here, so it is looked up once
  if ((order || check) && !detail::host_streams()) [[unlikely]] {
    detail::check_copy_operands(src, dst);  // the same errors as otherwise, before any stream is looked up
    const StreamRef on = detail::copy_stream(src, dst, stream);
    resolved = on;
    const DeviceScope scope(detail::copy_stream_device(src, dst, on));
    const std::initializer_list<detail::OperandUse> operands = {{"src", &src, false, false, src_storage},
                                                                {"dst", &dst, true, false, dst_storage}};
    if (order) accesses.begin(on, operands);
    uses.begin(on, "cuplan::copy", "", operands);
  }
  staged_copy(src, dst, resolved, src_owner, dst_owner);
  uses.end();
  accesses.end();
}

}  // namespace

void copy(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream) {
  copy_checked(src, dst, stream, nullptr, nullptr);
}

void copy(const TensorRef& src, const TensorRef& dst, std::optional<StreamRef> stream) {
  detail::require_defined(src, "copy", "src");
  detail::require_defined(dst, "copy", "dst");
  copy_checked(src.view(), dst.view(), stream, &src, &dst);
}

void copy(const Tensor& src, const Tensor& dst, std::optional<StreamRef> stream) {
  copy(TensorRef(src), TensorRef(dst), stream);
}

void copy(const Tensor& src, const TensorView& dst, std::optional<StreamRef> stream) {
  copy(TensorRef(src), TensorRef(dst), stream);
}

void copy(const TensorView& src, const Tensor& dst, std::optional<StreamRef> stream) {
  copy(TensorRef(src), TensorRef(dst), stream);
}

}  // namespace CUPLAN_ABI_NAMESPACE

namespace detail {

void release_staged_copier() noexcept {
  StagedCopier& e = copier();
  const std::lock_guard lock(e.mutex);
  e.pipeline.release();
}

}  // namespace detail
}  // namespace cuplan
