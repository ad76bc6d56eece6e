// SPDX-License-Identifier: Apache-2.0
// Work-area policies, estimate_workspace_size and the memory report as a user calls them. CPU: option errors on the
// class and function forms (hit and miss alike), estimates equal to what the CPU route reports, the report of the
// host's cached plans. GPU (skipped without one): estimates equal to workspace_size() after plan() over a table of
// FFTs and products, one shared area per stream grown to the largest user, shared and external areas giving the
// float64 reference's results, two and four streams sharing plans in turn under the ordering checker, an external
// buffer used by two streams without an edge reported by the checker, and the plan cache's byte limit.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "fft/fft_test_util.hpp"
#include "plan/checking_on.hpp"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

using cf = std::complex<float>;
constexpr std::size_t MiB = std::size_t{1} << 20;

Shape shape_of(const std::vector<std::int64_t>& dims) {
  return Shape(std::span<const std::int64_t>(dims));
}

// ---------------------------------------------------------------------------------------------------------------
// Without a GPU.

TEST(WorkAreaApi, PolicyOutsideTheEnumIsRefusedByEveryForm) {
  std::vector<cf> x(64);
  const TensorView view(x.data(), {8, 8});
  const auto bad = static_cast<WorkAreaPolicy>(9);
  expect_throw_naming<InvalidArgument>([&] { FFT f(view, {.execution = Execution::cpu(), .work_area = bad}); },
                                       {"FFT", "work_area", "WorkAreaPolicy", "9"});
  // The function form refuses it before its plan key, on every call (no plan can exist for it).
  for (int call = 0; call < 2; ++call)
    expect_throw_naming<InvalidArgument>([&] { (void)fft(view, {.execution = Execution::cpu(), .work_area = bad}); },
                                         {"fft", "work_area", "9"});
  expect_throw_naming<InvalidArgument>(
      [&] { (void)estimate_workspace_size(view, {.execution = Execution::cpu(), .work_area = bad}); },
      {"work_area", "9"});
  std::vector<float> a(16), b(16);
  MatmulOptions options;
  options.execution = Execution::cpu();
  options.work_area = bad;
  expect_throw_naming<InvalidArgument>(
      [&] {
        Matmul m(TensorView(a.data(), {4, 4}), TensorView(b.data(), {4, 4}), options);
      },
      {"work_area", "9"});
  for (int call = 0; call < 2; ++call)
    expect_throw_naming<InvalidArgument>(
        [&] {
          (void)matmul(TensorView(a.data(), {4, 4}), TensorView(b.data(), {4, 4}), options);
        },
        {"matmul", "work_area", "9"});
}

TEST(WorkAreaApi, RealTransformChecksItsWorkAreaOptions) {
  std::vector<float> x(64);
  const TensorView view(x.data(), {8, 8});
  expect_throw_naming<InvalidArgument>(
      [&] { RealTransform t(view, {.execution = Execution::cpu(), .work_area = static_cast<WorkAreaPolicy>(4)}); },
      {"RealTransform", "work_area", "4"});
  std::vector<std::int8_t> area(4096);
  expect_throw_naming<InvalidArgument>(
      [&] {
        RealTransform t(view, {.execution = Execution::cpu(),
                               .work_area = WorkAreaPolicy::external,
                               .work_area_buffer = TensorView(area.data(), {4096})});
      },
      {"RealTransform", "work_area_buffer", "device or managed memory"});
  // The CPU route has no device work area under any policy.
  for (WorkAreaPolicy policy : {WorkAreaPolicy::owned, WorkAreaPolicy::shared}) {
    RealTransform t(view, {.execution = Execution::cpu(), .work_area = policy});
    t.plan();
    EXPECT_EQ(t.workspace_size(), 0u);
  }
}

TEST(WorkAreaApi, ConvolutionChecksItsWorkAreaOptions) {
  std::vector<float> x(64), k(8);
  const TensorView xv(x.data(), {8, 8}), kv(k.data(), {1, 8});
  const auto bad = static_cast<WorkAreaPolicy>(5);
  expect_throw_naming<InvalidArgument>(
      [&] { Convolution c(xv, kv, {.axes = {1}, .execution = Execution::cpu(), .work_area = bad}); },
      {"Convolution", "work_area", "5"});
  for (int call = 0; call < 2; ++call)
    expect_throw_naming<InvalidArgument>(
        [&] { (void)fftconvolve(xv, kv, {.axes = {1}, .execution = Execution::cpu(), .work_area = bad}); },
        {"fftconvolve", "work_area", "5"});
  const Tensor fine = fftconvolve(xv, kv, {.axes = {1}, .execution = Execution::cpu()});
  EXPECT_EQ(fine.shape(), Shape({8, 15}));
}

TEST(WorkAreaApi, ExternalBufferInHostMemoryIsRefusedOnEveryPath) {
  std::vector<cf> x(64);
  std::vector<std::int8_t> area(4096);
  const TensorView view(x.data(), {8, 8});
  const TensorView host_area(area.data(), {4096});
  const FFTOptions options{
      .execution = Execution::cpu(), .work_area = WorkAreaPolicy::external, .work_area_buffer = host_area};
  expect_throw_naming<InvalidArgument>([&] { FFT f(view, options); },
                                       {"work_area_buffer", "expected device or managed memory", "host"});
  for (int call = 0; call < 2; ++call)
    expect_throw_naming<InvalidArgument>([&] { (void)ifft(view, options); }, {"ifft", "work_area_buffer"});
  // A buffer without the external policy would be silently unused: refused too.
  FFTOptions shared{.execution = Execution::cpu(), .work_area = WorkAreaPolicy::shared, .work_area_buffer = host_area};
  expect_throw_naming<InvalidArgument>([&] { FFT f(view, shared); }, {"work_area_buffer", "expected none", "shared"});
}

TEST(WorkAreaApi, CpuEstimatesEqualWhatTheCpuRouteReports) {
  struct Case {
    std::vector<std::int64_t> shape;
    std::vector<int> axes;
    bool real;
  };
  const std::vector<Case> table = {
      {{64, 256}, {1}, false}, {{16, 32, 8}, {0, 1, 2}, false}, {{1000}, {0}, true}, {{12, 10, 6}, {1, 2}, true}};
  for (const Case& c : table) {
    std::int64_t n = 1;
    for (std::int64_t d : c.shape) n *= d;
    std::vector<cf> complex_data(static_cast<std::size_t>(n));
    std::vector<float> real_data(static_cast<std::size_t>(n));
    const Shape shape = shape_of(c.shape);
    const TensorView view = c.real ? TensorView(real_data.data(), shape) : TensorView(complex_data.data(), shape);
    for (WorkAreaPolicy policy : {WorkAreaPolicy::automatic, WorkAreaPolicy::owned, WorkAreaPolicy::shared}) {
      const FFTOptions options{.axes = c.axes, .execution = Execution::cpu(), .work_area = policy};
      const std::size_t estimate = estimate_workspace_size(view, options);
      FFT f(view, options);
      f.plan();
      EXPECT_EQ(estimate, f.workspace_size()) << fmt::format("{} axes {}", shape, c.axes.size());
    }
  }
  std::vector<float> a(6 * 4), b(4 * 5);
  MatmulOptions options;
  options.execution = Execution::cpu();
  const TensorView av(a.data(), {6, 4}), bv(b.data(), {4, 5});
  const std::size_t estimate = estimate_workspace_size(av, bv, options);
  Matmul m(av, bv, options);
  EXPECT_EQ(m.workspace_size(), 0u);  // before plan()
  m.plan();
  EXPECT_EQ(estimate, m.workspace_size());
  m.free();
  expect_throw_naming<StateError>([&] { (void)m.workspace_size(); }, {"workspace_size", "free"});
}

TEST(WorkAreaApi, MemoryReportCountsTheHostsCachedPlansAndFormats) {
  plan_cache::clear();
  std::vector<cf> x(256);
  (void)fft(TensorView(x.data(), {16, 16}), {.execution = Execution::cpu()});
  (void)fft(TensorView(x.data(), {256}), {.execution = Execution::cpu()});
  const memory::Report report = memory::report(Device::cpu());
  EXPECT_EQ(report.device, Device::cpu());
  EXPECT_EQ(report.cached_plans, 2u);
  EXPECT_EQ(report.shared_work_areas, 0u);  // no device memory is reported for the host
  const std::string text = fmt::format("{}", report);
  EXPECT_NE(text.find("memory of cpu"), std::string::npos) << text;
  EXPECT_NE(text.find("2 cached plans"), std::string::npos) << text;
  EXPECT_EQ(fmt::format("{}", WorkAreaPolicy::external), "external");
  EXPECT_NE(fmt::format("{}", plan_cache::stats()).find("B held"), std::string::npos);
  expect_throw_naming<InvalidArgument>([] { memory::release_work_areas(Device::cpu()); },
                                       {"release_work_areas", "CUDA device", "cpu"});
  plan_cache::clear();
}

// ---------------------------------------------------------------------------------------------------------------
// With a GPU.

// Random c64 data on the host, its copy on the device (stream-ordered on `s`).
struct DeviceData {
  std::vector<cf> host;
  Tensor device;
};
DeviceData random_device(const std::vector<std::int64_t>& shape, StreamRef s) {
  DeviceData d;
  d.host = random_vector<cf>(static_cast<std::size_t>(product(shape)));
  const Shape sh = shape_of(shape);
  d.device = Tensor::empty(sh, c64, Device::cuda(0), s);
  copy(TensorView(d.host.data(), sh), d.device.view(), s);
  return d;
}

// A device result buffer full of NaN, so that an element the transform leaves unwritten fails the comparison.
Tensor poisoned(const Shape& shape, StreamRef s) {
  Tensor t = Tensor::empty(shape, c64, Device::cuda(0), s);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<cf> fill(static_cast<std::size_t>(t.numel()), cf(nan, nan));
  copy(TensorView(fill.data(), shape), t.view(), s);
  return t;
}

// The values of a result written on `s`, once that work is done (read on the host's default stream otherwise
// unordered with `s`).
std::vector<cd> settled(const Tensor& t, const Stream& s) {
  s.synchronize();
  return to_dense(t.view());
}

// The float64 reference: the same values in c128 through FFTW (the CPU route).
std::vector<cd> reference_fft(const std::vector<cf>& x, const std::vector<std::int64_t>& shape,
                              const std::vector<int>& axes) {
  std::vector<cd> wide(x.begin(), x.end());
  Tensor r = fft(TensorView(wide.data(), shape_of(shape)), {.axes = axes, .execution = Execution::cpu()});
  const cd* p = r.data<cd>();
  return std::vector<cd>(p, p + r.numel());
}

// Shapes whose cuFFT plans need a work area (cuFFT on an H200: 512 MiB each), and smaller ones that may need none.
struct Shaped {
  std::vector<std::int64_t> shape;
  std::vector<int> axes;
};
// Operands of 512 MiB, whose cuFFT plans need work areas; under CUPLAN_TEST_SHORT (the GPU sanitizers, which shadow
// every byte a kernel touches) 32 and 8 MiB ones, batched 1D FFTs of 2^20 and 2^19 points, which need areas too.
std::vector<Shaped> large_shapes() {
  if (short_run()) return {{{4, std::int64_t{1} << 20}, {1}}, {{2, std::int64_t{1} << 19}, {1}}};
  return {{{64, std::int64_t{1} << 20}, {1}}, {{8192, 8192}, {0, 1}}};
}
const std::vector<Shaped> kLarge = large_shapes();
const std::vector<Shaped> kSmall = {{{64, 4096}, {1}}, {{32, 64, 64}, {0, 1, 2}}, {{1009, 8}, {0}}};

TEST(WorkAreaGpu, FftEstimatesEqualWorkspaceSizeAfterPlan) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  struct Case {
    std::vector<std::int64_t> shape;
    DType dtype;
    std::vector<int> axes;
  };
  const std::vector<Case> table = {
      {{8192, 8192}, c64, {0, 1}},
      {{64, std::int64_t{1} << 20}, c64, {1}},
      {{64, std::int64_t{1} << 20}, f32, {1}},
      {{512, 512, 512}, c64, {0, 1, 2}},
      {{256, 256, 256}, f32, {0, 1, 2}},
      {{4096, 16384}, c64, {1}},
      {{4096, 16384}, f32, {1}},
      {{64, 1009}, c64, {1}},
      {{1000003}, c128, {0}},
      {{256, 64}, c64, {0}},  // strided: axis 0 of a row-major array
      {{128, 96, 80}, c128, {0, 2}},
      {{3, 7, 1}, c64, {2}},  // every axis of length 1: no plan at all
  };
  for (const Case& c : table) {
    const Tensor x = Tensor::empty(shape_of(c.shape), c.dtype, Device::cuda(0), s);
    for (WorkAreaPolicy policy : {WorkAreaPolicy::owned, WorkAreaPolicy::shared}) {
      const FFTOptions options{.axes = c.axes, .stream = s, .work_area = policy};
      const std::size_t estimate = estimate_workspace_size(x, options);
      FFT f(x, options);
      f.plan();
      EXPECT_EQ(estimate, f.workspace_size()) << f.describe();
    }
  }
  s.synchronize();
}

TEST(WorkAreaGpu, MatmulEstimatesEqualWorkspaceSizeAfterPlan) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  struct Case {
    std::int64_t m, n, k, batch;
    DType dtype;
    Epilog epilog;
  };
  const std::vector<Case> table = {{512, 512, 512, 1, f32, Epilog::none},    {4096, 4096, 4096, 1, bf16, Epilog::none},
                                   {1024, 2048, 8192, 1, f16, Epilog::gelu}, {256, 256, 64, 16, f32, Epilog::relu},
                                   {8192, 64, 8192, 1, bf16, Epilog::none},  {128, 128, 128, 4, c64, Epilog::none}};
  for (const Case& c : table) {
    const Shape a_shape = c.batch > 1 ? Shape{c.batch, c.m, c.k} : Shape{c.m, c.k};
    const Shape b_shape = c.batch > 1 ? Shape{c.batch, c.k, c.n} : Shape{c.k, c.n};
    const Tensor a = Tensor::empty(a_shape, c.dtype, Device::cuda(0), s);
    const Tensor b = Tensor::empty(b_shape, c.dtype, Device::cuda(0), s);
    MatmulOptions options;
    options.epilog = c.epilog;
    options.stream = s;
    const std::size_t estimate = estimate_workspace_size(a, b, options);
    Matmul m(a, b, options);
    m.plan();
    EXPECT_EQ(estimate, m.workspace_size()) << m.describe();
  }
  s.synchronize();
}

TEST(WorkAreaGpu, OneSharedAreaPerStreamGrownToTheLargestUser) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  memory::release_work_areas(Device::cuda(0));
  std::vector<FFT> ffts;
  std::vector<Tensor> operands;
  std::size_t largest = 0, sum = 0;
  for (const auto& set : {kLarge, kSmall})
    for (const Shaped& c : set) {
      operands.push_back(device_zeros(shape_of(c.shape), c64, s));
      ffts.emplace_back(operands.back(), FFTOptions{.axes = c.axes, .stream = s, .work_area = WorkAreaPolicy::shared});
      ffts.back().plan();
      largest = std::max(largest, ffts.back().workspace_size());
      sum += ffts.back().workspace_size();
    }
  ASSERT_GT(largest, 0u) << "no plan of the table needs a work area on this GPU";
  for (FFT& f : ffts) (void)f.execute();
  const memory::Report report = memory::report(Device::cuda(0));
  EXPECT_EQ(report.shared_work_areas, 1u) << fmt::format("{}", report);
  EXPECT_EQ(report.shared_work_area_bytes, largest) << "sum of the plans' areas: " << sum;
  EXPECT_EQ(report.owned_work_area_bytes, 0u);
  s.synchronize();
  ffts.clear();
  memory::release_work_areas(Device::cuda(0));
  EXPECT_EQ(memory::report(Device::cuda(0)).shared_work_area_bytes, 0u);
}

// Each policy gives the float64 reference's result, written into a poisoned output.
TEST(WorkAreaGpu, SharedOwnedAndExternalAreasGiveTheReferenceResult) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  for (const Shaped& c : kLarge) {
    DeviceData x = random_device(c.shape, s);
    const std::vector<cd> expected = reference_fft(x.host, c.shape, c.axes);
    const std::size_t need = estimate_workspace_size(x.device, {.axes = c.axes, .stream = s});
    Tensor area = Tensor::empty({static_cast<std::int64_t>(need + 256)}, i8, Device::cuda(0), s);
    for (WorkAreaPolicy policy : {WorkAreaPolicy::owned, WorkAreaPolicy::shared, WorkAreaPolicy::external}) {
      FFTOptions options{.axes = c.axes, .stream = s, .work_area = policy};
      if (policy == WorkAreaPolicy::external) options.work_area_buffer = area.view();
      FFT f(x.device, options);
      f.plan();
      Tensor out = poisoned(x.device.shape(), s);
      (void)f.execute({.out = out.view()});
      EXPECT_LT(relative_error(settled(out, s), expected), 1e-5) << to_string(policy) << " " << f.describe();
    }
  }
}

// The example of docs/memory.md, "Work areas": an external buffer sized by the estimate.
TEST(WorkAreaGpu, ExternalAreaSizedByTheEstimate) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  DeviceData data = random_device({8192, 8192}, s);
  const Tensor& x = data.device;
  const std::size_t bytes = cuplan::estimate_workspace_size(x, {.axes = {0, 1}});
  auto area = cuplan::Tensor::empty({static_cast<std::int64_t>(bytes)}, cuplan::i8, cuplan::Device::cuda(0), s);
  cuplan::FFT f(x, {.axes = {0, 1}, .work_area = cuplan::WorkAreaPolicy::external, .work_area_buffer = area.view()});
  f.plan(s);
  EXPECT_EQ(f.workspace_size(), bytes);
  Tensor out = poisoned(x.shape(), s);
  (void)f.execute({.stream = s, .out = out.view()});
  EXPECT_LT(relative_error(settled(out, s), reference_fft(data.host, {8192, 8192}, {0, 1})), 1e-5);
}

TEST(WorkAreaGpu, ExternalBufferTooSmallMisalignedOrOnAnotherDeviceIsRefused) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  const Shaped& c = kLarge.front();
  const Tensor x = Tensor::empty(shape_of(c.shape), c64, Device::cuda(0), s);
  const std::size_t need = estimate_workspace_size(x, {.axes = c.axes, .stream = s});
  ASSERT_GT(need, 256u);
  Tensor area = Tensor::empty({static_cast<std::int64_t>(need)}, i8, Device::cuda(0), s);
  const TensorView small(area.data(), i8, {static_cast<std::int64_t>(need / 2)}, Strides{1}, Device::cuda(0),
                         MemorySpace::device);
  FFT f(x, {.axes = c.axes, .stream = s, .work_area = WorkAreaPolicy::external, .work_area_buffer = small});
  expect_throw_naming<InvalidArgument>([&] { f.plan(); }, {"work_area_buffer", fmt::format("at least {} bytes", need),
                                                           fmt::format("got {} bytes", need / 2)});
  const TensorView shifted(static_cast<std::int8_t*>(area.data()) + 64, i8, {static_cast<std::int64_t>(need - 64)},
                           Strides{1}, Device::cuda(0), MemorySpace::device);
  expect_throw_naming<InvalidArgument>(
      [&] { FFT g(x, {.axes = c.axes, .work_area = WorkAreaPolicy::external, .work_area_buffer = shifted}); },
      {"work_area_buffer", "aligned to 256 bytes"});
  MatmulOptions mo;
  mo.work_area = WorkAreaPolicy::external;
  mo.work_area_buffer = TensorView(area.data(), i8, {1}, Strides{1}, Device::cuda(0), MemorySpace::device);
  const Tensor a = Tensor::empty({4096, 4096}, bf16, Device::cuda(0), s);
  if (estimate_workspace_size(a, a, {.stream = s}) > 1) {
    Matmul m(a, a, mo);
    expect_throw_naming<InvalidArgument>([&] { m.plan({.stream = s}); }, {"work_area_buffer", "got 1 bytes"});
  }
  if (cuda_device_count() > 1) {
    Tensor other = Tensor::empty({static_cast<std::int64_t>(need)}, i8, Device::cuda(1));
    FFT g(x, {.axes = c.axes, .stream = s, .work_area = WorkAreaPolicy::external, .work_area_buffer = other.view()});
    expect_throw_naming<InvalidArgument>([&] { g.plan(); }, {"work_area_buffer", "memory of cuda:0", "cuda:1"});
  }
  f.free();
  expect_throw_naming<StateError>([&] { (void)f.execute(); }, {"execute"});
  s.synchronize();
}

// `streams` streams take turns with every plan (class and function forms) under the ordering checker: each plan
// runs on each stream's area in turn, the results match the reference, and the checker sees no unordered use.
void plans_in_turn(int streams) {
  CheckingOn checking;
  std::vector<Stream> pool(static_cast<std::size_t>(streams));
  std::vector<DeviceData> data;
  std::vector<std::vector<cd>> expected;
  std::vector<Shaped> shapes = kSmall;
  shapes.push_back(kLarge.front());
  for (const Shaped& c : shapes) {
    data.push_back(random_device(c.shape, pool[0]));
    expected.push_back(reference_fft(data.back().host, c.shape, c.axes));
  }
  std::vector<FFT> ffts;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    ffts.emplace_back(data[i].device, FFTOptions{.axes = shapes[i].axes, .work_area = WorkAreaPolicy::shared});
    ffts.back().plan(pool[0]);
  }
  for (int round = 0; round < 2 * streams; ++round) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      Stream& s = pool[(i + static_cast<std::size_t>(round)) % pool.size()];
      Tensor out = poisoned(data[i].device.shape(), s);
      (void)ffts[i].execute({.stream = s, .out = out.view()});
      EXPECT_LT(relative_error(settled(out, s), expected[i]), 1e-5) << "round " << round << " plan " << i;
      // The function form's cached plan, on the same stream, asking for the shared area.
      Tensor y = fft(data[i].device, {.axes = shapes[i].axes, .stream = s, .work_area = WorkAreaPolicy::shared});
      EXPECT_LT(relative_error(settled(y, s), expected[i]), 1e-5) << "function form, round " << round;
    }
  }
  for (Stream& s : pool) s.synchronize();
  EXPECT_EQ(memory::report(Device::cuda(0)).shared_work_areas, static_cast<std::size_t>(streams));
  ffts.clear();
  memory::release_work_areas(Device::cuda(0));
}

TEST(WorkAreaGpu, TwoStreamsSharePlansInTurnUnderTheChecker) {
  CUPLAN_REQUIRE_GPU();
  memory::release_work_areas(Device::cuda(0));
  plans_in_turn(2);
}

TEST(WorkAreaGpu, FourStreamsSharePlansInTurnUnderTheChecker) {
  CUPLAN_REQUIRE_GPU();
  memory::release_work_areas(Device::cuda(0));
  plans_in_turn(4);
}

// The per-thread default stream is one handle naming a stream per thread: two threads using it at once each get
// an area of their own (one shared between them would be written by both at once).
TEST(WorkAreaGpu, PerThreadDefaultStreamsGetAnAreaEach) {
  CUPLAN_REQUIRE_GPU();
  memory::release_work_areas(Device::cuda(0));
  const Shaped& c = kLarge.front();
  Stream setup;
  DeviceData x = random_device(c.shape, setup);
  setup.synchronize();
  const std::vector<cd> expected = reference_fft(x.host, c.shape, c.axes);
  std::vector<double> errors(2, 1.0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      const StreamRef s = Stream::per_thread_default(Device::cuda(0)).ref();
      double worst = 0;
      for (int i = 0; i < 3; ++i) {
        Tensor y = fft(x.device, {.axes = c.axes, .stream = s, .work_area = WorkAreaPolicy::shared});
        s.synchronize();
        worst = std::max(worst, relative_error(to_dense(y.view()), expected));
      }
      errors[t] = worst;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_LT(errors[0], 1e-5);
  EXPECT_LT(errors[1], 1e-5);
  EXPECT_EQ(memory::report(Device::cuda(0)).shared_work_areas, 2u);
  memory::release_work_areas(Device::cuda(0));
}

// RealTransform (DCT-II over both axes of f32 [2048, 4096]) with each policy, against the CPU's f64 transform.
TEST(WorkAreaGpu, RealTransformPoliciesGiveTheReferenceResult) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  const std::vector<std::int64_t> dims = {2048, 4096};
  const std::vector<float> host = random_vector<float>(static_cast<std::size_t>(product(dims)));
  const std::vector<double> wide(host.begin(), host.end());
  const Tensor reference = dctn(TensorView(wide.data(), shape_of(dims)), {.execution = Execution::cpu()});
  const std::vector<cd> expected = to_dense(reference.view());
  Tensor x = Tensor::empty(shape_of(dims), f32, Device::cuda(0), s);
  copy(TensorView(host.data(), shape_of(dims)), x.view(), s);
  std::size_t need = 0;
  {
    RealTransform probe(x, {.stream = s});
    probe.plan();
    need = probe.workspace_size();
  }
  ASSERT_GT(need, 0u);  // the passes' row buffers at least
  Tensor area = Tensor::empty({static_cast<std::int64_t>(need)}, i8, Device::cuda(0), s);
  for (WorkAreaPolicy policy : {WorkAreaPolicy::owned, WorkAreaPolicy::shared, WorkAreaPolicy::external}) {
    RealTransformOptions options{.stream = s, .work_area = policy};
    if (policy == WorkAreaPolicy::external) options.work_area_buffer = area.view();
    RealTransform t(x, options);
    t.plan();
    Tensor out = Tensor::empty(shape_of(dims), f32, Device::cuda(0), s);
    const std::vector<float> nan(host.size(), std::numeric_limits<float>::quiet_NaN());
    copy(TensorView(nan.data(), shape_of(dims)), out.view(), s);
    (void)t.execute({.out = out.view()});
    EXPECT_LT(relative_error(settled(out, s), expected), 1e-5) << to_string(policy);
    // The function form takes the same choice (R2RNOptions::work_area).
    const Tensor y = dctn(x, {.stream = s, .work_area = policy, .work_area_buffer = options.work_area_buffer});
    EXPECT_LT(relative_error(settled(y, s), expected), 1e-5) << "dctn, " << to_string(policy);
  }
  const TensorView small(area.data(), i8, {static_cast<std::int64_t>(need - 256)}, Strides{1}, Device::cuda(0),
                         MemorySpace::device);
  RealTransform t(x, {.stream = s, .work_area = WorkAreaPolicy::external, .work_area_buffer = small});
  expect_throw_naming<InvalidArgument>([&] { t.plan(); },
                                       {"RealTransform", "work_area_buffer", fmt::format("at least {} bytes", need)});
  s.synchronize();
}

// Convolution along the rows of f32 [64, 65536] with a [64, 1025] kernel under each policy, against the CPU in f64.
TEST(WorkAreaGpu, ConvolutionPoliciesGiveTheReferenceResult) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  const std::vector<std::int64_t> x_dims = {64, 65536}, k_dims = {64, 1025};
  const std::vector<float> xh = random_vector<float>(static_cast<std::size_t>(product(x_dims)));
  const std::vector<float> kh = random_vector<float>(static_cast<std::size_t>(product(k_dims)));
  const std::vector<double> xw(xh.begin(), xh.end()), kw(kh.begin(), kh.end());
  const Tensor reference = fftconvolve(TensorView(xw.data(), shape_of(x_dims)), TensorView(kw.data(), shape_of(k_dims)),
                                       {.axes = {1}, .execution = Execution::cpu()});
  const std::vector<cd> expected = to_dense(reference.view());
  Tensor x = Tensor::empty(shape_of(x_dims), f32, Device::cuda(0), s);
  Tensor k = Tensor::empty(shape_of(k_dims), f32, Device::cuda(0), s);
  copy(TensorView(xh.data(), shape_of(x_dims)), x.view(), s);
  copy(TensorView(kh.data(), shape_of(k_dims)), k.view(), s);
  std::size_t bound = 0;
  {
    Convolution probe(x, k, {.axes = {1}, .stream = s});
    probe.plan();
    bound = probe.workspace_size();  // at least the cuFFT area
  }
  Tensor area = Tensor::empty({static_cast<std::int64_t>(bound)}, i8, Device::cuda(0), s);
  for (WorkAreaPolicy policy : {WorkAreaPolicy::owned, WorkAreaPolicy::shared, WorkAreaPolicy::external}) {
    ConvolutionOptions options{.axes = {1}, .stream = s, .work_area = policy};
    if (policy == WorkAreaPolicy::external) options.work_area_buffer = area.view();
    Convolution c(x, k, options);
    c.plan();
    Tensor out = Tensor::empty(reference.shape(), f32, Device::cuda(0), s);
    const std::vector<float> nan(static_cast<std::size_t>(reference.numel()), std::numeric_limits<float>::quiet_NaN());
    copy(TensorView(nan.data(), reference.shape()), out.view(), s);
    (void)c.execute({.out = out.view()});
    EXPECT_LT(relative_error(settled(out, s), expected), 1e-5) << to_string(policy) << " " << c.describe();
  }
  // The function form on the stream's shared area.
  const Tensor y = fftconvolve(x, k, {.axes = {1}, .stream = s, .work_area = WorkAreaPolicy::shared});
  EXPECT_LT(relative_error(settled(y, s), expected), 1e-5);
  s.synchronize();
}

TEST(WorkAreaGpu, CacheByteLimitReleasesIdlePlansOwnedAreas) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  plan_cache::clear();
  plan_cache::reset_stats();
  // Room for the larger plan's area and half the smaller one's: each call then releases the other plan's idle area.
  std::vector<std::size_t> areas;
  for (const Shaped& c : kLarge)
    areas.push_back(estimate_workspace_size(random_device(c.shape, s).device, {.axes = c.axes}));
  ASSERT_GT(std::ranges::min(areas), 0u);
  const std::size_t limit = std::ranges::max(areas) + std::ranges::min(areas) / 2;
  plan_cache::set_byte_limit(limit);
  // Counted around the device calls alone: the float64 references go through the cache too (CPU plans).
  std::size_t misses = 0, hits = 0;
  for (int round = 0; round < 3; ++round)
    for (const Shaped& c : kLarge) {
      DeviceData x = random_device(c.shape, s);
      const PlanCacheStats before = plan_cache::stats();
      Tensor y = fft(x.device, {.axes = c.axes, .stream = s, .work_area = WorkAreaPolicy::owned});
      const PlanCacheStats after = plan_cache::stats();
      misses += after.misses - before.misses;
      hits += after.hits - before.hits;
      EXPECT_LT(relative_error(settled(y, s), reference_fft(x.host, c.shape, c.axes)), 1e-5);
      EXPECT_LE(plan_cache::stats().bytes, limit) << fmt::format("{}", plan_cache::stats());
      EXPECT_LE(memory::report(Device::cuda(0)).cached_plan_bytes, limit);
    }
  EXPECT_EQ(misses, 2u);  // the two plans stay cached: every later call is a hit
  EXPECT_EQ(hits, 4u);
  EXPECT_GE(plan_cache::stats().work_areas_released, 4u);
  plan_cache::set_byte_limit(plan_cache::no_byte_limit);
  plan_cache::clear();
  s.synchronize();
}

}  // namespace
}  // namespace cuplan::testing
