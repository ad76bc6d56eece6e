// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuFFT's status checks moved to base/cufft/cufft_check.hpp, shared by the FFT and real-to-real cuFFT backends.

#include "base/cufft/cufft_check.hpp"
