// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cuplan error hierarchy (which mistake gives which error: docs/misuse.md, "The table", and the "Errors"
// sections of docs/fft.md and docs/matmul.md). Every exception cuplan throws derives from cuplan::Error.

#include <stdexcept>
#include <string>

#include "cuplan/export.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

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

/// A wait on the peers of a distributed operation that outlived the communicator's timeout
/// (Communicator::set_timeout, CUPLAN_DISTRIBUTED_TIMEOUT_MS). The message names the rank, the operation and phase,
/// the timeout and what was waited for. The communicator is aborted: every later call of an object over it raises
/// this error again (docs/distributed.md, "Timeouts").
class CUPLAN_API TimeoutError : public Error {
 public:
  using Error::Error;
};

/// An allocation that failed, host or device.
class CUPLAN_API OutOfMemory : public Error {
 public:
  using Error::Error;
};

/// Thrown by the ordering checker (cuplan/checking.hpp, on with CUPLAN_CHECK=1): a call touches memory whose last
/// cuplan use ran on another stream, is still pending, and no recorded edge orders this call after it.
class CUPLAN_API OrderingError : public Error {
 public:
  using Error::Error;
};

/// A prolog or epilog of an FFT (cuplan/fft_callbacks.hpp) that cannot be used: CUDA source that does not compile,
/// a signature that does not match the transform's element type, a form the execution cannot run (CUDA code on the
/// CPU, a host callable on the GPU) or a layout callbacks do not support. `callback()` names it ("prolog 'scale'"),
/// `log()` holds the compiler's or linker's log (empty when none ran). An InvalidArgument, so code catching that
/// catches this too.
class CUPLAN_API CallbackError : public InvalidArgument {
 public:
  /// `message` is what() (it names the callback and ends with the log, if any).
  CallbackError(const std::string& message, std::string callback, std::string log);
  /// "prolog 'symbol'" or "epilog 'symbol'" (host callables: "prolog (host callable)").
  const std::string& callback() const noexcept { return callback_; }
  /// The NVRTC or nvJitLink log of the failed compilation or link; empty when the error is not a compiler's.
  const std::string& log() const noexcept { return log_; }

 private:
  std::string callback_;
  std::string log_;
};

/// A library call that returned an error status. `call()` is the failing expression, `status()` its numeric
/// status, `status_name()` the symbolic name (e.g. "CUFFT_INVALID_SIZE"). A failure inside a call of an FFT,
/// Matmul (class or function form) or distributed object also names that object in `context()` and at the end of
/// what(): the call, operation, shape, dtype and device (docs/misuse.md, "Library errors").
class CUPLAN_API LibraryError : public Error {
 public:
  /// An error of `library` (e.g. "cuFFT") from the expression `call`, which returned `status` (symbolic name
  /// `status_name`); `message` is what() and should name them all.
  LibraryError(std::string library, std::string call, int status, std::string status_name, std::string message);
  /// The same, made inside the call of an object that `context` describes (what() should end with it).
  LibraryError(std::string library, std::string call, int status, std::string status_name, std::string message,
               std::string context);
  /// The library that failed, e.g. "cuFFT", "cuBLASLt", "CUDA runtime".
  const std::string& library() const noexcept { return library_; }
  /// The failing expression.
  const std::string& call() const noexcept { return call_; }
  /// The numeric status the call returned.
  int status() const noexcept { return status_; }
  /// The symbolic name of status(), e.g. "CUFFT_INVALID_SIZE".
  const std::string& status_name() const noexcept { return status_name_; }
  /// The object call the failure happened in, e.g. "FFT.execute: C2C c64 -> c64, shape [8, 16] -> [8, 16], axes
  /// [1], on cpu (FFTW)"; empty for a failure outside an object's call.
  const std::string& context() const noexcept { return context_; }

 private:
  std::string library_;
  std::string call_;
  int status_;
  std::string status_name_;
  std::string context_;
};

/// A CUDA runtime call that failed (library() == "CUDA runtime").
class CUPLAN_API CudaError : public LibraryError {
 public:
  using LibraryError::LibraryError;
};

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
