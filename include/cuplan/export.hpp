// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUPLAN_API marks what the shared library exports: the public classes and functions of these headers. Everything
// else, the library's internals included, is hidden (the library is built with hidden visibility by default).

#include "cuplan/config.hpp"

#if defined(CUPLAN_STATIC_DEFINE)
#define CUPLAN_API
#elif defined(__GNUC__) || defined(__clang__)
#define CUPLAN_API __attribute__((visibility("default")))
#else
#define CUPLAN_API
#endif
