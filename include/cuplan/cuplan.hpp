#pragma once
// cuplan: GPU FFT and matrix multiplication with plan/execute objects and explicit, safe stream semantics.

#include "cuplan/device.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#if __has_include("cuplan/format.hpp")
#include "cuplan/format.hpp"
#endif
#if __has_include("cuplan/fft.hpp")
#include "cuplan/fft.hpp"
#endif
#if __has_include("cuplan/matmul.hpp")
#include "cuplan/matmul.hpp"
#endif
