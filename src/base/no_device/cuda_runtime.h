// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU-only build's <cuda_runtime.h>: the no-device runtime of cuda_runtime_api.h next to this file.

#include "cuda_runtime_api.h"
