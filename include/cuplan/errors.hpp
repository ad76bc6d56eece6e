#pragma once
// The cuplan error hierarchy (see the error types in docs/getting-started.md and docs/fft.md, docs/matmul.md). Every
// exception cuplan throws derives from cuplan::Error.

#include <stdexcept>
#include <string>

#include "cuplan/export.hpp"

namespace cuplan {

/// Base of every exception thrown by cuplan.
class CUPLAN_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A shape, dtype, stride, axis, alignment or device that does not fit. The message names the operand,
/// the expected and the actual value.
class CUPLAN_API InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A valid request that this build, backend or device cannot do (e.g. fp8 without Hopper, c32 FFT of odd size).
class CUPLAN_API NotSupported : public Error {
 public:
  using Error::Error;
};

/// A call in the wrong state: execute before plan, any call after free, no operand, an event never recorded.
class CUPLAN_API StateError : public Error {
 public:
  using Error::Error;
};

/// An allocation that failed, host or device.
class CUPLAN_API OutOfMemory : public Error {
 public:
  using Error::Error;
};

/// Reserved for the ordering checker (not built yet: nothing throws it), which will report work on a tracked tensor
/// that is not ordered after an earlier use on another stream.
class CUPLAN_API OrderingError : public Error {
 public:
  using Error::Error;
};

/// A library call that returned an error status. `call()` is the failing expression, `status()` its numeric
/// status, `status_name()` the symbolic name (e.g. "CUFFT_INVALID_SIZE").
class CUPLAN_API LibraryError : public Error {
 public:
  LibraryError(std::string library, std::string call, int status, std::string status_name, std::string message);
  const std::string& library() const noexcept { return library_; }
  const std::string& call() const noexcept { return call_; }
  int status() const noexcept { return status_; }
  const std::string& status_name() const noexcept { return status_name_; }

 private:
  std::string library_;
  std::string call_;
  int status_;
  std::string status_name_;
};

/// A CUDA runtime call that failed (library() == "CUDA runtime").
class CUPLAN_API CudaError : public LibraryError {
 public:
  using LibraryError::LibraryError;
};

}  // namespace cuplan
