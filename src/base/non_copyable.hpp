// SPDX-License-Identifier: Apache-2.0
#pragma once
// A base that makes a class neither copyable nor copy-assignable (the objects that own a thread, a per-thread
// resource or a process-wide setting for their lifetime), as boost::noncopyable does.

namespace cuplan::detail {

class NonCopyable {
 public:
  NonCopyable(const NonCopyable&) = delete;
  NonCopyable& operator=(const NonCopyable&) = delete;

 protected:
  NonCopyable() = default;
  ~NonCopyable() = default;
};

}  // namespace cuplan::detail
