// SPDX-License-Identifier: Apache-2.0
#pragma once
// The DLPack 1.1 ABI that cuplan exchanges tensors through, declared by cuplan itself (docs/getting-started.md,
// "DLPack"): the library and every consumer see the same layout whatever `<dlpack/dlpack.h>` a system ships
// (Debian 12 ships 0.6, which has no versioned tensor and no float8 codes), and none is needed to build or use cuplan.
// The names are DLPack's, inside cuplan::dlpack; the layouts are DLPack's C structs, byte for byte, so a pointer to
// one is a pointer to the other (dlpack::cast), and TensorView and Tensor::from_dlpack also take a DLPack header's
// own types directly.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuplan/config.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace dlpack {

/// DLPack's `DLPackVersion`: the ABI version of a versioned managed tensor.
struct DLPackVersion {
  std::uint32_t major;  ///< A different major version has a different layout after `flags`.
  std::uint32_t minor;  ///< A newer minor version only adds enumeration values.
};

/// The DLPack version whose layout cuplan declares and writes into exported versioned tensors (1.1).
inline constexpr DLPackVersion version{CUPLAN_DLPACK_MAJOR_VERSION, CUPLAN_DLPACK_MINOR_VERSION};

/// DLPack's `DLDeviceType` (the values of DLPack 1.1; cuplan reads and writes the four CUDA and CPU ones).
enum DLDeviceType : std::int32_t {
  kDLCPU = 1,           ///< Host memory.
  kDLCUDA = 2,          ///< CUDA device memory.
  kDLCUDAHost = 3,      ///< Pinned host memory (cudaMallocHost).
  kDLOpenCL = 4,        ///< OpenCL.
  kDLVulkan = 7,        ///< Vulkan.
  kDLMetal = 8,         ///< Metal.
  kDLVPI = 9,           ///< Verilog simulator.
  kDLROCM = 10,         ///< ROCm device memory.
  kDLROCMHost = 11,     ///< Pinned host memory (hipMallocHost).
  kDLExtDev = 12,       ///< Reserved extension device.
  kDLCUDAManaged = 13,  ///< CUDA managed memory (cudaMallocManaged).
  kDLOneAPI = 14,       ///< oneAPI unified shared memory.
  kDLWebGPU = 15,       ///< WebGPU.
  kDLHexagon = 16,      ///< Qualcomm Hexagon DSP.
  kDLMAIA = 17,         ///< Microsoft MAIA.
};

/// DLPack's `DLDataTypeCode` (the values of DLPack 1.1).
enum DLDataTypeCode : std::uint8_t {
  kDLInt = 0,                 ///< Signed integer.
  kDLUInt = 1,                ///< Unsigned integer.
  kDLFloat = 2,               ///< IEEE floating point.
  kDLOpaqueHandle = 3,        ///< Opaque handle.
  kDLBfloat = 4,              ///< bfloat16.
  kDLComplex = 5,             ///< Complex (interleaved real and imaginary parts).
  kDLBool = 6,                ///< Boolean.
  kDLFloat8_e3m4 = 7,         ///< float8 e3m4.
  kDLFloat8_e4m3 = 8,         ///< float8 e4m3.
  kDLFloat8_e4m3b11fnuz = 9,  ///< float8 e4m3b11fnuz.
  kDLFloat8_e4m3fn = 10,      ///< float8 e4m3fn (no infinities: CUDA's __nv_fp8_e4m3, cuplan::f8_e4m3).
  kDLFloat8_e4m3fnuz = 11,    ///< float8 e4m3fnuz.
  kDLFloat8_e5m2 = 12,        ///< float8 e5m2 (CUDA's __nv_fp8_e5m2, cuplan::f8_e5m2).
  kDLFloat8_e5m2fnuz = 13,    ///< float8 e5m2fnuz.
  kDLFloat8_e8m0fnu = 14,     ///< float8 e8m0fnu.
  kDLFloat6_e2m3fn = 15,      ///< float6 e2m3fn.
  kDLFloat6_e3m2fn = 16,      ///< float6 e3m2fn.
  kDLFloat4_e2m1fn = 17,      ///< float4 e2m1fn.
};

/// DLPack's `DLDevice`.
struct DLDevice {
  DLDeviceType device_type;  ///< Kind of memory.
  std::int32_t device_id;    ///< Device index (0 for host, pinned and managed memory).
};

/// DLPack's `DLDataType`.
struct DLDataType {
  std::uint8_t code;    ///< A DLDataTypeCode.
  std::uint8_t bits;    ///< Bits per lane.
  std::uint16_t lanes;  ///< Lanes of a vector type (1 for every type cuplan knows).
};

/// DLPack's `DLTensor`: a borrowed description of memory.
struct DLTensor {
  void* data;                 ///< Start of the allocation (element 0 is at `data + byte_offset`).
  DLDevice device;            ///< Where the memory is.
  std::int32_t ndim;          ///< Rank.
  DLDataType dtype;           ///< Element type.
  std::int64_t* shape;        ///< `ndim` extents.
  std::int64_t* strides;      ///< `ndim` strides in elements, or null for row-major.
  std::uint64_t byte_offset;  ///< Bytes from `data` to element 0.
};

/// DLPack's legacy `DLManagedTensor`: a DLTensor with its owner.
struct DLManagedTensor {
  DLTensor dl_tensor;                      ///< The tensor.
  void* manager_ctx;                       ///< The producer's context.
  void (*deleter)(DLManagedTensor* self);  ///< Called once by the consumer when done; may be null.
};

/// DLPack 1.x `DLManagedTensorVersioned`: a DLTensor with its owner, ABI version and flags.
struct DLManagedTensorVersioned {
  DLPackVersion version;                            ///< The layout's version; a consumer checks `major`.
  void* manager_ctx;                                ///< The producer's context.
  void (*deleter)(DLManagedTensorVersioned* self);  ///< Called once by the consumer when done; may be null.
  std::uint64_t flags;                              ///< flag_read_only, flag_is_copied, flag_is_subbyte_type_padded.
  DLTensor dl_tensor;                               ///< The tensor.
};

/// DLPack's `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write the memory.
inline constexpr std::uint64_t flag_read_only = 1ULL << 0U;
/// DLPack's `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer made a copy that the consumer owns alone.
inline constexpr std::uint64_t flag_is_copied = 1ULL << 1U;
/// DLPack's `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: a sub-byte type is padded rather than packed.
inline constexpr std::uint64_t flag_is_subbyte_type_padded = 1ULL << 2U;

static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4 && offsetof(DLTensor, shape) == 24 &&
                  sizeof(DLTensor) == 48 && sizeof(DLManagedTensor) == 64 &&
                  offsetof(DLManagedTensorVersioned, dl_tensor) == 32 && sizeof(DLManagedTensorVersioned) == 80,
              "cuplan::dlpack: the layout differs from DLPack's C structs on this platform");

}  // namespace dlpack
}  // namespace CUPLAN_ABI_NAMESPACE

// What the constructors and functions that take a DLPack header's own types accept (TensorView, Tensor::from_dlpack).
namespace detail {
template <class T, class Ours>
concept DLPackSameLayout = std::is_standard_layout_v<T> && std::is_standard_layout_v<Ours> &&
                               sizeof(T) == sizeof(Ours) &&
                           alignof(T) == alignof(Ours);

/// The DLTensor of some DLPack header (any version: its layout has not changed since 0.4).
template <class T>
concept DLPackForeignTensor = !std::is_same_v<std::remove_cv_t<T>, dlpack::DLTensor> &&
                              DLPackSameLayout<std::remove_cv_t<T>, dlpack::DLTensor> && requires(T & t) {
  t.data;
  t.device.device_type;
  t.device.device_id;
  t.ndim;
  t.dtype.code;
  t.dtype.bits;
  t.dtype.lanes;
  t.shape;
  t.strides;
  t.byte_offset;
};

/// The legacy DLManagedTensor of some DLPack header.
template <class T>
concept DLPackForeignManaged =
    !std::is_same_v<T, dlpack::DLManagedTensor> && DLPackSameLayout<T, dlpack::DLManagedTensor> && requires(T & t) {
  requires DLPackForeignTensor<std::remove_cvref_t<decltype(t.dl_tensor)>>;
  t.manager_ctx;
  t.deleter;
};

/// The DLManagedTensorVersioned of a DLPack 1.x header.
template <class T>
concept DLPackForeignManagedVersioned = !std::is_same_v<T, dlpack::DLManagedTensorVersioned> &&
                                        DLPackSameLayout<T, dlpack::DLManagedTensorVersioned> && requires(T & t) {
  requires DLPackForeignTensor<std::remove_cvref_t<decltype(t.dl_tensor)>>;
  t.version.major;
  t.version.minor;
  t.manager_ctx;
  t.deleter;
  t.flags;
};
}  // namespace detail

inline namespace CUPLAN_ABI_NAMESPACE {
namespace dlpack {

/// The same object seen through the other declaration of its DLPack struct: a `::DLManagedTensor*` of a DLPack
/// header from cuplan's `dlpack::DLManagedTensor*`, or back (likewise DLTensor and DLManagedTensorVersioned). Both
/// declare one C layout; the conversion is checked at compile time to be between structs of equal size and
/// alignment.
template <class To, class From>
requires cuplan::detail::DLPackSameLayout<std::remove_cv_t<To>, std::remove_cv_t<From>> To* cast(
    From* pointer) noexcept {
  return reinterpret_cast<To*>(pointer);
}

}  // namespace dlpack
}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
