#pragma once
// NVTX ranges around plan and execute, so cuplan's phases show by name in Nsight Systems. With no profiler
// attached an NVTX call returns at once (the header-only NVTX 3 checks one pointer).

#include <nvtx3/nvToolsExt.h>

namespace cuplan::detail {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) noexcept { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace cuplan::detail
