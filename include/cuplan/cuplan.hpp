// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuplan: GPU FFT and matrix multiplication with plan/execute objects and explicit, safe stream semantics.

#include "cuplan/checking.hpp"
#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/fft.hpp"
#include "cuplan/format.hpp"
#include "cuplan/matmul.hpp"
#include "cuplan/memory.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "cuplan/tuning.hpp"
