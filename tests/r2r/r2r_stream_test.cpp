// SPDX-License-Identifier: Apache-2.0
// The stream contract of RealTransform on CUDA (skipped without a GPU): phases on two streams, reset_operand across
// streams, `after` events, host operands (blocking) and device operands (enqueued), the function forms on a stream,
// release_workspace, and large batched shapes (on the passes and on the default route); every result checked against
// the CPU (FFTW) result in float64.

#include <gtest/gtest.h>

#include <vector>

#include "cuplan/cuplan.hpp"
#include "r2r_reference.hpp"
#include "support/test_support.hpp"

namespace {

using namespace cuplan;

using r2r_test::to_host;

Tensor device_copy(const std::vector<double>& v, const Shape& shape, DType dtype, StreamRef stream) {
  Tensor host = Tensor::empty(shape, dtype);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (dtype == f32)
      host.data<float>()[i] = static_cast<float>(v[i]);
    else
      host.data<double>()[i] = v[i];
  }
  Tensor d = host.to(Device::cuda(0), stream);
  stream.synchronize();
  return d;
}

// The CPU's float64 result of the same transform.
using r2r_test::cpu_reference;

TEST(R2RStreams, PhasesOnTwoStreamsAndResetAcrossStreams) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  const Shape shape{64, 96};
  const auto a = r2r_test::random_vector(64 * 96, 1);
  const auto b = r2r_test::random_vector(64 * 96, 2);
  const Tensor xa = device_copy(a, shape, f32, s1);
  const Tensor xb = device_copy(b, shape, f32, s2);
  const RealTransformOptions o{.kinds = {R2RKind::dct2, R2RKind::dst2}};
  RealTransform rt(xa, o);
  rt.plan(s1);
  const Tensor ya = rt.execute({.stream = s1});  // enqueued on s1
  rt.reset_operand(xb, s2);                      // s2 now runs after the object's work on s1
  const Tensor yb = rt.execute({.stream = s2});
  s2.synchronize();
  s1.synchronize();
  EXPECT_LE(r2r_test::relative_error(to_host(ya), cpu_reference(a, shape, o, Direction::forward)), 2e-6);
  EXPECT_LE(r2r_test::relative_error(to_host(yb), cpu_reference(b, shape, o, Direction::forward)), 2e-6);
  // The inverse on s1 again, after s2's phase.
  rt.reset_operand(yb, s1);
  const Tensor back = rt.execute({.direction = Direction::inverse, .stream = s1});
  EXPECT_LE(r2r_test::relative_error(to_host(back), b), 2e-6);
  EXPECT_TRUE(rt.uses_cuda());
  EXPECT_GT(rt.workspace_size(), 0u);
  EXPECT_NE(rt.describe().find("R2C"), std::string::npos) << rt.describe();
}

TEST(R2RStreams, AfterEventsOrderTheProducer) {
  CUPLAN_REQUIRE_GPU();
  Stream producer, consumer;
  const auto v = r2r_test::random_vector(128 * 256, 3);
  const Tensor x = Tensor::empty({128, 256}, f64, Device::cuda(0), producer);
  // The producer writes x on its own stream; the transform on the consumer waits for its event only.
  Tensor host = Tensor::empty({128, 256}, f64);
  std::copy(v.begin(), v.end(), host.data<double>());
  copy(host, x, producer);
  const Event written = producer.record();
  const Tensor y = dctn(x, {.type = 3, .norm = R2RNorm::ortho, .stream = consumer, .after = {written}});
  consumer.synchronize();
  EXPECT_LE(r2r_test::relative_error(
                to_host(y),
                cpu_reference(v, {128, 256}, {.kinds = {R2RKind::dct3}, .norm = R2RNorm::ortho}, Direction::forward)),
            1e-13);
}

TEST(R2RStreams, HostOperandsBlockAndDeviceOperandsEnqueue) {
  CUPLAN_REQUIRE_GPU();
  const auto v = r2r_test::random_vector(33 * 40, 4);
  std::vector<double> h(v);
  const TensorView hv(h.data(), {33, 40});
  const Tensor y = dst(hv, {.type = 4, .axis = 0, .execution = Execution::cuda()});
  EXPECT_TRUE(y.device().is_cpu());  // usable at once
  RealTransformOptions o{.axes = {0}, .kinds = {R2RKind::dst4}};
  EXPECT_LE(r2r_test::relative_error(std::vector<double>(y.data<double>(), y.data<double>() + y.numel()),
                                     cpu_reference(v, {33, 40}, o, Direction::forward)),
            1e-13);
  // In place on a host operand through the device.
  const Tensor z = idct(hv, {.type = 1, .inplace = true, .execution = Execution::cuda()});
  EXPECT_EQ(z.data(), static_cast<void*>(h.data()));
  o = {.axes = {1}, .kinds = {R2RKind::dct1}};
  EXPECT_LE(r2r_test::relative_error(h, cpu_reference(v, {33, 40}, o, Direction::inverse)), 1e-13);
}

TEST(R2RStreams, LargeBatchesEveryKindAndReleaseWorkspace) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  for (std::int64_t n : {1024, 1009, 4096}) {
    const std::int64_t rows = 257;
    const auto v = r2r_test::random_vector(static_cast<std::size_t>(rows * n), 5);
    const Tensor x = device_copy(v, {rows, n}, f32, s);
    for (int k = 0; k < 8; ++k)
      // The passes (route cufft), and the default route, which runs the fused kernel at the lengths it compiled.
      for (FFTRoute route : {FFTRoute::cufft, FFTRoute::automatic}) {
        const RealTransformOptions o{.kinds = {static_cast<R2RKind>(k)}, .stream = s, .route = route};
        RealTransform rt(x, o);
        rt.plan();
        if (route == FFTRoute::cufft) {
          EXPECT_GT(rt.workspace_size(), 0u);
        }
        const Tensor y = rt.execute({.release_workspace = true});
        EXPECT_LE(r2r_test::relative_error(to_host(y), cpu_reference(v, {rows, n}, o, Direction::forward)), 2e-6)
            << to_string(static_cast<R2RKind>(k)) << " n " << n << " " << rt.describe();
        const Tensor again = rt.execute();  // the workspace comes back
        EXPECT_LE(r2r_test::relative_error(to_host(again), to_host(y)), 1e-7);
      }
  }
}

// Repeated executes with the same pointers replay a captured graph: new data in the same operand each time, and
// every result right; the same with graph_replay off, and alternating directions (two graphs).
TEST(R2RStreams, RepeatedCallsReplayTheSameWork) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  const Shape shape{48, 80};
  Tensor x = Tensor::empty(shape, f64, Device::cuda(0), s);
  Tensor y = Tensor::empty(shape, f64, Device::cuda(0), s);
  for (bool replay : {true, false}) {
    const RealTransformOptions o{
        .axes = {0, 1}, .kinds = {R2RKind::dct4, R2RKind::dst2}, .stream = s, .graph_replay = replay};
    RealTransform rt(x, o);
    rt.plan();
    for (int call = 0; call < 6; ++call) {
      const auto v = r2r_test::random_vector(48 * 80, static_cast<std::uint32_t>(100 + call));
      Tensor host = Tensor::empty(shape, f64);
      std::copy(v.begin(), v.end(), host.data<double>());
      copy(host, x, s);
      const Direction direction = call % 2 == 0 ? Direction::forward : Direction::inverse;
      rt.execute({.direction = direction, .out = y});  // a Tensor: to_host below waits for this write
      EXPECT_LE(r2r_test::relative_error(to_host(y), cpu_reference(v, shape, o, direction)), 1e-13)
          << "call " << call << (replay ? " with" : " without") << " graph replay";
    }
  }
}

}  // namespace
