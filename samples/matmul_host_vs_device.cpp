// SPDX-License-Identifier: Apache-2.0
// The blocking rule side by side: host operands block and return a host tensor; device operands return at once
// with a device tensor that is valid in stream order.
#include <chrono>
#include <cstdio>
#include <vector>

#include "sample_support.hpp"

int main() {
  namespace cp = cuplan;
  const cp::Device device = sample::device("matmul_host_vs_device");
  const std::int64_t n = device.is_cuda() ? 2048 : 512;  // smaller on the CPU: the sample shows behaviour, not speed
  std::vector<float> ha(n * n, 1.0f), hb(n * n, 0.25f);
  cp::Stream s;

  auto t0 = std::chrono::steady_clock::now();
  cp::Tensor host_d = cp::matmul(cp::TensorView(ha.data(), {n, n}), cp::TensorView(hb.data(), {n, n}), {.stream = s});
  auto t1 = std::chrono::steady_clock::now();
  sample::check(host_d.view().on_host(), "host operands give a host result");
  sample::check(host_d.data<float>()[0] == 0.25f * n, "host result is usable at once");

  auto da = cp::Tensor::empty({n, n}, cp::f32, device, s);
  auto db = cp::Tensor::empty({n, n}, cp::f32, device, s);
  cp::copy(cp::TensorView(ha.data(), {n, n}), da.view(), s);
  cp::copy(cp::TensorView(hb.data(), {n, n}), db.view(), s);
  auto t2 = std::chrono::steady_clock::now();
  cp::Tensor dev_d = cp::matmul(da, db, {.stream = s});  // returns once enqueued
  auto t3 = std::chrono::steady_clock::now();
  sample::check(dev_d.view().on_host() == device.is_cpu(), "operands on the device give a result on the device");
  s.synchronize();  // before the host reads it
  cp::Tensor back = dev_d.to(cp::Device::cpu(), s);
  sample::check(back.data<float>()[n * n - 1] == 0.25f * n, "device result matches after synchronising");
  std::printf("host operands: call took %.3f ms (blocking); device operands: call took %.3f ms (enqueue only)\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t3 - t2).count());
  return 0;
}
