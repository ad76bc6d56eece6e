// SPDX-License-Identifier: Apache-2.0
// Bad work-area input as a user passes it, and what the default policy is. CPU (views stated as device memory, which
// the forms refuse before any device work): an external buffer overlapping an operand, the kernel or the output
// (function forms, and the class forms' construction), not contiguous, misaligned, empty or absent, given to CPU
// execution, a byte limit of 0 or past max_byte_limit, releasing the areas of a device that does not exist, calls
// after free(); one plan for automatic and shared. GPU (skipped without one): the function forms' default is shared
// (the stream's area, gone with its Stream), RealTransform, Convolution and host-operand plans report the bytes they
// hold to the cache and release them under its byte limit, Convolution's external area is exactly work_area_size()
// bytes (one byte less is refused), and the class forms refuse an operand or out inside the external area at execute.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "fft/fft_test_util.hpp"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

using cf = std::complex<float>;

// The batch of the 2^20-point FFTs whose cuFFT plans need a work area of the operand's size: 512 MiB operands, 32 MiB
// under CUPLAN_TEST_SHORT (the GPU sanitizers, which shadow every byte a kernel touches).
std::int64_t large_batch() {
  return short_run() ? 4 : 64;
}

std::size_t count(const Shape& shape) {
  std::size_t n = 1;
  for (int axis = 0; axis < shape.size(); ++axis) n *= static_cast<std::size_t>(shape[axis]);
  return n;
}

// Host memory with a 256-byte aligned start, for views stated as device memory of cuda:0: without a GPU the
// runtime takes the statement as given, and every check below refuses the call before any device work.
class Arena {
 public:
  explicit Arena(std::size_t bytes) : storage_(bytes + 256) {}
  std::byte* at(std::size_t offset) {
    const auto base = reinterpret_cast<std::uintptr_t>(storage_.data());
    return storage_.data() + ((256 - base % 256) % 256) + offset;
  }
  TensorView device(std::size_t offset, DType dtype, Shape shape) {
    return TensorView(at(offset), dtype, shape, row_major_strides(shape), Device::cuda(0), MemorySpace::device);
  }

 private:
  std::vector<std::byte> storage_;
};

TEST(WorkAreaChecks, ExternalBufferOverlappingAnOperandIsRefusedByEveryFunctionForm) {
  Arena arena(1 << 16);
  const TensorView area = arena.device(0, i8, {4096});
  const TensorView inside = arena.device(1024, c64, {8, 8});  // within the area's 4096 bytes
  const TensorView apart = arena.device(8192, c64, {8, 8});
  const FFTOptions fo{.work_area = WorkAreaPolicy::external, .work_area_buffer = area};
  // Every call refuses it (the second would be a cache hit if the first had planned).
  for (int call = 0; call < 2; ++call) {
    expect_throw_naming<InvalidArgument>([&] { (void)fft(inside, fo); },
                                         {"fft", "work_area_buffer", "apart from operand", "overlapping operand"});
    expect_throw_naming<InvalidArgument>([&] { fft(apart, inside, fo); },
                                         {"fft", "work_area_buffer", "apart from out", "overlapping out"});
  }
  MatmulOptions mo;
  mo.work_area = WorkAreaPolicy::external;
  mo.work_area_buffer = area;
  const TensorView a_inside = arena.device(256, f32, {4, 4}), b_apart = arena.device(8192, f32, {4, 4});
  expect_throw_naming<InvalidArgument>([&] { (void)matmul(a_inside, b_apart, mo); },
                                       {"matmul", "work_area_buffer", "apart from a"});
  expect_throw_naming<InvalidArgument>([&] { (void)matmul(b_apart, a_inside, mo); },
                                       {"matmul", "work_area_buffer", "apart from b"});
  mo.c = arena.device(2048, f32, {4, 4});
  mo.beta = 1.0;
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)matmul(b_apart, arena.device(12288, f32, {4, 4}), mo);
      },
      {"matmul", "work_area_buffer", "apart from c"});
  // fp8 scale tensors, which cuBLASLt reads mid-product: refused before any other rule about them applies.
  mo.c.reset();
  mo.beta = 0.0;
  mo.scales.a.tensor = arena.device(1536, f32, {1});
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)matmul(b_apart, arena.device(12288, f32, {4, 4}), mo);
      },
      {"matmul", "work_area_buffer", "apart from scales.a.tensor"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Matmul m(b_apart, arena.device(12288, f32, {4, 4}), mo);
      },
      {"Matmul", "work_area_buffer", "apart from scales.a.tensor"});
  mo.scales.a.tensor.reset();
  mo.scales.b.tensor = arena.device(2560, f32, {1});
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)matmul(b_apart, arena.device(12288, f32, {4, 4}), mo);
      },
      {"matmul", "work_area_buffer", "apart from scales.b.tensor"});
  mo.scales.b.tensor.reset();
  const TensorView real_inside = arena.device(512, f32, {8, 8});
  const TensorView kernel_inside = arena.device(3072, f32, {1, 8});
  const TensorView real_apart = arena.device(8192, f32, {8, 8}), kernel_apart = arena.device(12288, f32, {1, 8});
  ConvolutionOptions co{.axes = {1}, .work_area = WorkAreaPolicy::external, .work_area_buffer = area};
  expect_throw_naming<InvalidArgument>([&] { (void)fftconvolve(real_inside, kernel_apart, co); },
                                       {"fftconvolve", "work_area_buffer", "apart from operand"});
  expect_throw_naming<InvalidArgument>([&] { (void)fftconvolve(real_apart, kernel_inside, co); },
                                       {"fftconvolve", "work_area_buffer", "apart from kernel"});
  const R2ROptions ro{.work_area = WorkAreaPolicy::external, .work_area_buffer = area};
  expect_throw_naming<InvalidArgument>([&] { (void)dct(real_inside, ro); },
                                       {"dct", "work_area_buffer", "apart from operand"});
  expect_throw_naming<InvalidArgument>([&] { idst(real_apart, real_inside, ro); },
                                       {"idst", "work_area_buffer", "apart from out"});
  const R2RNOptions rno{.work_area = WorkAreaPolicy::external, .work_area_buffer = area};
  expect_throw_naming<InvalidArgument>([&] { (void)dctn(real_inside, rno); },
                                       {"dctn", "work_area_buffer", "apart from operand"});
  // The class forms refuse the construction's operands at once (execute checks every later one, on a GPU below).
  expect_throw_naming<InvalidArgument>([&] { FFT f(inside, fo); }, {"FFT", "work_area_buffer", "apart from operand"});
  expect_throw_naming<InvalidArgument>([&] { Matmul m(b_apart, a_inside, mo); },
                                       {"Matmul", "work_area_buffer", "apart from b"});
  expect_throw_naming<InvalidArgument>(
      [&] { RealTransform t(real_inside, {.work_area = WorkAreaPolicy::external, .work_area_buffer = area}); },
      {"RealTransform", "work_area_buffer", "apart from operand"});
  expect_throw_naming<InvalidArgument>([&] { Convolution c(real_apart, kernel_inside, co); },
                                       {"Convolution", "work_area_buffer", "apart from kernel"});
  expect_throw_naming<InvalidArgument>([&] { (void)estimate_workspace_size(inside, fo); },
                                       {"work_area_buffer", "apart from operand"});
}

TEST(WorkAreaChecks, ExternalBufferMustBeContiguousAlignedAndPresent) {
  Arena arena(1 << 16);
  const TensorView x = arena.device(8192, c64, {8, 8});
  const TensorView strided(arena.at(0), i8, {1024}, Strides{2}, Device::cuda(0), MemorySpace::device);
  const TensorView misaligned(arena.at(1), i8, {1024}, Strides{1}, Device::cuda(0), MemorySpace::device);
  const auto options = [](std::optional<TensorView> buffer) {
    return FFTOptions{.work_area = WorkAreaPolicy::external, .work_area_buffer = buffer};
  };
  for (int call = 0; call < 2; ++call) {
    expect_throw_naming<InvalidArgument>([&] { (void)fft(x, options(strided)); },
                                         {"fft", "work_area_buffer", "expected a contiguous buffer", "strides"});
    expect_throw_naming<InvalidArgument>(
        [&] { (void)fft(x, options(misaligned)); },
        {"fft", "work_area_buffer", "aligned to 256 bytes", "1 bytes past a 256-byte boundary"});
    expect_throw_naming<InvalidArgument>([&] { (void)fft(x, options(TensorView())); },
                                         {"fft", "work_area_buffer", "expected a device buffer", "an empty view"});
    expect_throw_naming<InvalidArgument>([&] { (void)fft(x, options(std::nullopt)); },
                                         {"fft", "work_area_buffer", "got none"});
  }
  expect_throw_naming<InvalidArgument>([&] { FFT f(x, options(strided)); }, {"FFT", "work_area_buffer", "contiguous"});
  expect_throw_naming<InvalidArgument>([&] { (void)estimate_workspace_size(x, options(misaligned)); },
                                       {"work_area_buffer", "aligned to 256 bytes"});
  const TensorView real = arena.device(8192, f32, {8, 8});
  expect_throw_naming<InvalidArgument>(
      [&] { (void)dst(real, {.work_area = WorkAreaPolicy::external, .work_area_buffer = strided}); },
      {"dst", "work_area_buffer", "contiguous"});
  expect_throw_naming<InvalidArgument>(
      [&] { (void)dct(real, {.work_area = WorkAreaPolicy::shared, .work_area_buffer = misaligned}); },
      {"dct", "work_area_buffer", "expected none with WorkAreaPolicy::shared"});
  // The function forms of RealTransform take the policy too: an out-of-range value is refused on every call.
  for (int call = 0; call < 2; ++call)
    expect_throw_naming<InvalidArgument>([&] { (void)dctn(real, {.work_area = static_cast<WorkAreaPolicy>(200)}); },
                                         {"dctn", "work_area", "WorkAreaPolicy", "200"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)estimate_work_area_size(real, arena.device(12288, f32, {1, 8}),
                                      {.work_area = static_cast<WorkAreaPolicy>(7)});
      },
      {"Convolution", "work_area", "7"});
}

// CPU execution has no library work area: an external buffer there would be silently unused, so it is refused.
TEST(WorkAreaChecks, ExternalBufferIsRefusedWithCpuExecution) {
  Arena arena(1 << 16);
  const TensorView area = arena.device(0, i8, {4096});
  std::vector<cf> x(64);
  std::vector<float> r(64), k(8), a(16), b(16);
  const TensorView xv(x.data(), {8, 8}), rv(r.data(), {8, 8}), kv(k.data(), {1, 8});
  const FFTOptions fo{.execution = Execution::cpu(), .work_area = WorkAreaPolicy::external, .work_area_buffer = area};
  expect_throw_naming<InvalidArgument>([&] { FFT f(xv, fo); }, {"FFT", "work_area_buffer", "CPU execution", "4096"});
  for (int call = 0; call < 2; ++call)
    expect_throw_naming<InvalidArgument>([&] { (void)fft(xv, fo); }, {"work_area_buffer", "CPU execution"});
  const RealTransformOptions rto{
      .execution = Execution::cpu(), .work_area = WorkAreaPolicy::external, .work_area_buffer = area};
  expect_throw_naming<InvalidArgument>([&] { RealTransform t(rv, rto); },
                                       {"RealTransform", "work_area_buffer", "CPU execution"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)dct(rv, {.execution = Execution::cpu(), .work_area = WorkAreaPolicy::external, .work_area_buffer = area});
      },
      {"dct", "work_area_buffer", "CPU execution"});
  const ConvolutionOptions co{
      .axes = {1}, .execution = Execution::cpu(), .work_area = WorkAreaPolicy::external, .work_area_buffer = area};
  expect_throw_naming<InvalidArgument>([&] { Convolution c(rv, kv, co); },
                                       {"Convolution", "work_area_buffer", "CPU execution"});
  expect_throw_naming<InvalidArgument>([&] { (void)fftconvolve(rv, kv, co); }, {"work_area_buffer", "CPU execution"});
  MatmulOptions mo;
  mo.execution = Execution::cpu();
  mo.work_area = WorkAreaPolicy::external;
  mo.work_area_buffer = area;
  const TensorView av(a.data(), {4, 4}), bv(b.data(), {4, 4});
  expect_throw_naming<InvalidArgument>([&] { Matmul m(av, bv, mo); }, {"Matmul", "work_area_buffer", "CPU execution"});
  expect_throw_naming<InvalidArgument>([&] { (void)matmul(av, bv, mo); },
                                       {"matmul", "work_area_buffer", "CPU execution"});
  // owned and shared change nothing on the CPU: accepted, and the result is there.
  for (WorkAreaPolicy policy : {WorkAreaPolicy::owned, WorkAreaPolicy::shared}) {
    mo.work_area = policy;
    mo.work_area_buffer.reset();
    EXPECT_EQ(matmul(av, bv, mo).shape(), Shape({4, 4}));
  }
}

TEST(WorkAreaChecks, ByteLimitOfZeroOrPastTheMaximumIsRefused) {
  plan_cache::set_byte_limit(plan_cache::no_byte_limit);
  EXPECT_EQ(plan_cache::stats().byte_limit, plan_cache::no_byte_limit);  // the default: none
  expect_throw_naming<InvalidArgument>([] { plan_cache::set_byte_limit(0); },
                                       {"plan_cache::set_byte_limit", "bytes", "expected 1 to", "got 0"});
  const std::size_t negative = static_cast<std::size_t>(-4096);
  expect_throw_naming<InvalidArgument>(
      [&] { plan_cache::set_byte_limit(negative); },
      {"plan_cache::set_byte_limit", "bytes", fmt::format("{}", plan_cache::max_byte_limit),
       fmt::format("got {}", negative)});
  expect_throw_naming<InvalidArgument>([] { plan_cache::set_byte_limit(plan_cache::max_byte_limit + 1); },
                                       {"bytes", fmt::format("got {}", plan_cache::max_byte_limit + 1)});
  EXPECT_EQ(plan_cache::stats().byte_limit, plan_cache::no_byte_limit);  // a refused limit changes nothing
  plan_cache::set_byte_limit(plan_cache::max_byte_limit);
  EXPECT_EQ(plan_cache::stats().byte_limit, plan_cache::max_byte_limit);
  EXPECT_NE(fmt::format("{}", plan_cache::stats()).find("limit"), std::string::npos);
  plan_cache::set_byte_limit(1);
  EXPECT_EQ(plan_cache::stats().byte_limit, 1u);
  plan_cache::set_byte_limit(plan_cache::no_byte_limit);
  EXPECT_EQ(fmt::format("{}", plan_cache::stats()).find("limit"), std::string::npos);
}

TEST(WorkAreaChecks, ReleasingTheAreasOfADeviceThatDoesNotExistIsRefused) {
  const int count = cuda_device_count();
  expect_throw_naming<InvalidArgument>([&] { memory::release_work_areas(Device::cuda(count)); },
                                       {"memory::release_work_areas", "device", fmt::format("got cuda:{}", count)});
  expect_throw_naming<InvalidArgument>([] { memory::release_work_areas(Device::cuda(-5)); },
                                       {"memory::release_work_areas", "device", "got cuda:-5"});
  expect_throw_naming<InvalidArgument>([] { memory::release_work_areas(Device::cpu()); }, {"CUDA device", "cpu"});
}

TEST(WorkAreaChecks, TheMemoryReportOfADeviceThatDoesNotExistNamesTheReport) {
  for (int index : {-5, 99})
    expect_throw_naming<InvalidArgument>([&] { (void)memory::report(Device::cuda(index)); },
                                         {"memory::report", "device", std::to_string(index)});
  EXPECT_NO_THROW((void)memory::report(Device::cpu()));
}

TEST(WorkAreaChecks, AutomaticAndSharedShareOneCachedPlanInTheFunctionForms) {
  std::vector<cf> x(256);
  const TensorView view(x.data(), {16, 16});
  plan_cache::clear();
  plan_cache::reset_stats();
  (void)fft(view, {.execution = Execution::cpu()});
  (void)fft(view, {.execution = Execution::cpu(), .work_area = WorkAreaPolicy::shared});
  EXPECT_EQ(plan_cache::stats().misses, 1u);  // automatic is shared in the function forms: the same plan
  EXPECT_EQ(plan_cache::stats().hits, 1u);
  (void)fft(view, {.execution = Execution::cpu(), .work_area = WorkAreaPolicy::owned});
  EXPECT_EQ(plan_cache::stats().misses, 2u);  // another policy, another plan
  plan_cache::clear();
}

TEST(WorkAreaChecks, ConvolutionWorkAreaSizeOnTheCpuAndAfterFree) {
  std::vector<float> x(64), k(8);
  const TensorView xv(x.data(), {8, 8}), kv(k.data(), {1, 8});
  const ConvolutionOptions co{.axes = {1}, .execution = Execution::cpu()};
  EXPECT_EQ(estimate_work_area_size(xv, kv, co), 0u);
  Convolution c(xv, kv, co);
  EXPECT_EQ(c.work_area_size(), 0u);
  c.plan();
  EXPECT_EQ(c.work_area_size(), 0u);  // FFTW has no library work area
  c.free();
  expect_throw_naming<StateError>([&] { (void)c.work_area_size(); }, {"work_area_size", "free"});
  expect_throw_naming<StateError>([&] { (void)c.workspace_size(); }, {"workspace_size", "free"});
}

// ---------------------------------------------------------------------------------------------------------------
// With a GPU.

template <class T>
Tensor device_copy(const std::vector<T>& host, const Shape& shape, StreamRef s) {
  Tensor t = Tensor::empty(shape, dtype_of<T>, Device::cuda(0), s);
  copy(TensorView(host.data(), shape), t.view(), s);
  return t;
}

// The function forms' cached plans share the area of their stream unless the call names another policy, and the
// area goes with the cuplan Stream that used it.
TEST(WorkAreaChecksGpu, FunctionFormsShareTheirStreamsAreaByDefault) {
  CUPLAN_REQUIRE_GPU();
  plan_cache::clear();
  memory::release_work_areas(Device::cuda(0));
  const memory::Report start = memory::report(Device::cuda(0));
  const Shape shape{large_batch(), std::int64_t{1} << 20};  // cuFFT asks for a work area of the operand's size
  std::size_t need = 0;
  {
    Stream s;
    const Tensor x = device_zeros(shape, c64, s);
    need = estimate_workspace_size(x, {.axes = {1}, .stream = s});
    ASSERT_GT(need, 0u);
    (void)fft(x, {.axes = {1}, .stream = s});
    (void)matmul(device_zeros({2048, 2048}, f32, s), device_zeros({2048, 2048}, f32, s), {.stream = s});
    s.synchronize();
    memory::Report now = memory::report(Device::cuda(0));
    EXPECT_EQ(now.shared_work_areas, start.shared_work_areas + 1) << fmt::format("{}", now);
    EXPECT_GE(now.shared_work_area_bytes - start.shared_work_area_bytes, need) << fmt::format("{}", now);
    EXPECT_EQ(now.owned_work_area_bytes, start.owned_work_area_bytes) << fmt::format("{}", now);
    EXPECT_LT(plan_cache::stats().bytes, need) << "the cached FFT plan holds no area of its own";
    // owned is one option away.
    (void)fft(x, {.axes = {1}, .stream = s, .work_area = WorkAreaPolicy::owned});
    s.synchronize();
    now = memory::report(Device::cuda(0));
    EXPECT_GE(now.owned_work_area_bytes - start.owned_work_area_bytes, need) << fmt::format("{}", now);
    EXPECT_GE(plan_cache::stats().bytes, need);
  }
  // The Stream is gone: so is its shared area (the cached plans stay, and take a new stream's area when used).
  const memory::Report end = memory::report(Device::cuda(0));
  EXPECT_EQ(end.shared_work_areas, start.shared_work_areas) << fmt::format("{}", end);
  EXPECT_EQ(end.shared_work_area_bytes, start.shared_work_area_bytes) << fmt::format("{}", end);
  plan_cache::clear();
}

TEST(WorkAreaChecksGpu, RealTransformConvolutionAndHostOperandPlansReportTheirBytes) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  plan_cache::clear();
  plan_cache::set_byte_limit(plan_cache::no_byte_limit);
  const Shape shape{64, 4096};
  const std::vector<float> host = random_vector<float>(count(shape));
  const std::vector<float> kernel_host = random_vector<float>(33);
  const Tensor x = device_copy(host, shape, s);
  const Tensor k = device_copy(kernel_host, Shape{1, 33}, s);
  std::vector<cf> complex_host(count(shape));
  std::vector<float> a(256 * 256, 1.0f);
  const auto bytes_now = [&] {
    s.synchronize();
    const std::size_t bytes = plan_cache::stats().bytes;
    EXPECT_EQ(bytes, memory::report(Device::cuda(0)).cached_plan_bytes);
    return bytes;
  };
  std::size_t total = 0;
  // The passes around cuFFT (the fused kernel, automatic's choice where the build compiled 4096, needs no area).
  (void)dct(x, {.stream = s, .work_area = WorkAreaPolicy::owned, .route = FFTRoute::cufft});
  EXPECT_GT(bytes_now(), total) << "dct's cached plan holds its device work area";
  total = bytes_now();
  // The separate route: cuFFT's area and the padded work buffers, which a byte limit releases (the fused route, where
  // the build compiled the padded length, holds the spectrum only).
  (void)fftconvolve(
      x, k, {.axes = {1}, .route = ConvolutionRoute::separate, .stream = s, .work_area = WorkAreaPolicy::owned});
  EXPECT_GT(bytes_now(), total) << "fftconvolve's cached plan holds its spectrum, work buffers and area";
  total = bytes_now();
  (void)fft(TensorView(complex_host.data(), shape), {.axes = {1}, .execution = Execution::cuda(0)});
  EXPECT_GT(bytes_now(), total) << "a host-operand FFT's cached plan holds its staging slots";
  total = bytes_now();
  (void)matmul(TensorView(a.data(), {256, 256}), TensorView(a.data(), {256, 256}), {.execution = Execution::cuda(0)});
  EXPECT_GT(bytes_now(), total) << "a host-operand product's cached plan holds its staging";
  // Under a limit of one byte every idle plan releases what it can; only the kernel's spectrum stays.
  plan_cache::set_byte_limit(1);
  const std::size_t spectrum = static_cast<std::size_t>(4097 / 2 + 1) * sizeof(cf);  // ≥ one row's R2C spectrum
  EXPECT_LT(bytes_now(), total);
  EXPECT_GE(plan_cache::stats().work_areas_released, 4u);
  EXPECT_LE(bytes_now(), 4 * spectrum * 8) << fmt::format("{}", plan_cache::stats());
  // Later hits allocate again and give the same results.
  const Tensor again = dct(x, {.stream = s, .work_area = WorkAreaPolicy::owned, .route = FFTRoute::cufft});
  const std::vector<double> wide(host.begin(), host.end());
  const Tensor reference = dct(TensorView(wide.data(), shape), {.execution = Execution::cpu()});
  s.synchronize();
  EXPECT_LT(relative_error(to_dense(again.view()), to_dense(reference.view())), 1e-5);
  plan_cache::set_byte_limit(plan_cache::no_byte_limit);
  plan_cache::clear();
}

TEST(WorkAreaChecksGpu, ConvolutionExternalAreaIsExactlyWorkAreaSize) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  struct Case {
    Shape x, k;
    std::vector<int> axes;
    ConvolutionRoute route;
  };
  const std::vector<Case> table = {{{64, std::int64_t{1} << 18}, {1, 4097}, {1}, ConvolutionRoute::separate},
                                   {{4, 1024, 1024}, {1, 65, 65}, {1, 2}, ConvolutionRoute::separate},
                                   {{8, 4096}, {1, 33}, {1}, ConvolutionRoute::automatic}};
  bool some_area = false;
  for (const Case& c : table) {
    const std::vector<float> xh = random_vector<float>(count(c.x));
    const std::vector<float> kh = random_vector<float>(count(c.k));
    const Tensor x = device_copy(xh, c.x, s), k = device_copy(kh, c.k, s);
    const ConvolutionOptions base{.axes = c.axes, .route = c.route, .stream = s};
    const std::size_t estimate = estimate_work_area_size(x, k, base);
    Convolution probe(x, k, base);
    probe.plan();
    ASSERT_EQ(probe.work_area_size(), estimate) << probe.describe();
    if (estimate == 0) continue;
    some_area = true;
    Tensor area = Tensor::empty({static_cast<std::int64_t>(estimate)}, i8, Device::cuda(0), s);
    ConvolutionOptions options = base;
    options.work_area = WorkAreaPolicy::external;
    // One byte less is refused when planned, naming both numbers.
    options.work_area_buffer = TensorView(area.data(), i8, {static_cast<std::int64_t>(estimate - 1)}, Strides{1},
                                          Device::cuda(0), MemorySpace::device);
    Convolution short_one(x, k, options);
    expect_throw_naming<InvalidArgument>(
        [&] { short_one.plan(); },
        {"work_area_buffer", fmt::format("at least {} bytes", estimate), fmt::format("got {} bytes", estimate - 1)});
    // Exactly that size works and gives the float64 reference's result.
    options.work_area_buffer = area.view();
    Convolution exact(x, k, options);
    exact.plan();
    Tensor out = Tensor::empty(exact.result_shape(), f32, Device::cuda(0), s);
    const std::vector<float> nan(static_cast<std::size_t>(out.numel()), std::numeric_limits<float>::quiet_NaN());
    copy(TensorView(nan.data(), out.shape()), out.view(), s);
    (void)exact.execute({.out = out.view()});
    const std::vector<double> xd(xh.begin(), xh.end()), kd(kh.begin(), kh.end());
    const Tensor reference = fftconvolve(TensorView(xd.data(), c.x), TensorView(kd.data(), c.k),
                                         {.axes = c.axes, .execution = Execution::cpu()});
    s.synchronize();
    EXPECT_LT(relative_error(to_dense(out.view()), to_dense(reference.view())), 1e-4) << exact.describe();
  }
  EXPECT_TRUE(some_area) << "no case needed a cuFFT work area: the exactness was not shown";
}

// Background planning would defer a plan's errors to a later call: with an external area the call plans itself, so
// a buffer too small for the plan is refused by the very call that gave it, miss or hit.
TEST(WorkAreaChecksGpu, FunctionFormWithAnExternalAreaRefusesASmallBufferAtTheCall) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  plan_cache::clear();
  plan_cache::reset_stats();
  const Shape shape{large_batch(), std::int64_t{1} << 20};
  const Tensor x = device_zeros(shape, c64, s);
  const std::size_t need = estimate_workspace_size(x, {.axes = {1}, .stream = s});
  ASSERT_GT(need, 256u);
  Tensor area = Tensor::empty({static_cast<std::int64_t>(need)}, i8, Device::cuda(0), s);
  const TensorView small(area.data(), i8, {static_cast<std::int64_t>(need - 256)}, Strides{1}, Device::cuda(0),
                         MemorySpace::device);
  const FFTOptions options{.axes = {1},
                           .stream = s,
                           .planning_mode = PlanningMode::background,
                           .work_area = WorkAreaPolicy::external,
                           .work_area_buffer = small};
  for (int call = 0; call < 2; ++call)
    expect_throw_naming<InvalidArgument>(
        [&] { (void)fft(x, options); },
        {"work_area_buffer", fmt::format("at least {} bytes", need), fmt::format("got {} bytes", need - 256)});
  FFTOptions fits = options;
  fits.work_area_buffer = area.view();
  const Tensor y = fft(x, fits);  // planned at the call, then a hit
  const Tensor z = fft(x, fits);
  s.synchronize();
  EXPECT_EQ(plan_cache::stats().hits, 1u);
  plan_cache::clear();
}

TEST(WorkAreaChecksGpu, ClassFormsRefuseOperandsInsideTheExternalArea) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  const Shape shape{large_batch(), std::int64_t{1} << 20};
  const Tensor x = device_zeros(shape, c64, s);
  const std::size_t need = estimate_workspace_size(x, {.axes = {1}, .stream = s});
  ASSERT_GE(need, count(shape) * sizeof(cf));
  Tensor area = Tensor::empty({static_cast<std::int64_t>(need)}, i8, Device::cuda(0), s);
  FFT f(x, {.axes = {1}, .stream = s, .work_area = WorkAreaPolicy::external, .work_area_buffer = area.view()});
  f.plan();
  const TensorView out_inside(area.data(), c64, shape, row_major_strides(shape), Device::cuda(0), MemorySpace::device);
  expect_throw_naming<InvalidArgument>([&] { (void)f.execute({.out = out_inside}); },
                                       {"FFT", "work_area_buffer", "apart from out"});
  f.reset_operand(out_inside);
  expect_throw_naming<InvalidArgument>([&] { (void)f.execute(); }, {"FFT", "work_area_buffer", "apart from operand"});
  f.reset_operand(x);
  (void)f.execute();  // still usable
  f.free();
  expect_throw_naming<StateError>([&] { (void)f.execute(); }, {"execute"});
  expect_throw_naming<StateError>([&] { (void)f.workspace_size(); }, {"workspace_size"});
  s.synchronize();
}

}  // namespace
}  // namespace cuplan::testing
