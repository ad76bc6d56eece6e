// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuplan: GPU FFT and matrix multiplication with plan/execute objects and explicit, safe stream semantics.
// Formatting cuplan types with fmt (fmt::format("{}", tensor)) is opt-in: include cuplan/format.hpp as well.

#include "cuplan/checking.hpp"
#include "cuplan/convolution.hpp"
#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/fft.hpp"
#include "cuplan/matmul.hpp"
#include "cuplan/memory.hpp"
#include "cuplan/names.hpp"
#include "cuplan/r2r.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "cuplan/tuning.hpp"
