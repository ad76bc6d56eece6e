// SPDX-License-Identifier: Apache-2.0
// FFT prolog and epilog callbacks with CPU execution (host callables in FFTW's chunked loop): numerics against a
// float64 reference, the position helpers, user data changes, the plan cache key, and the errors. The GPU forms'
// tests are in fft_callbacks_gpu_test.cpp; NVRTC compilation is tested in fft_callback_compile_test.cpp.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <mutex>
#include <numbers>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cuplan/fft_callback_device.hpp"
#include "fft/fft_test_util.hpp"

namespace cuplan::testing {
namespace {

using cf = std::complex<float>;

// Multiplies each element by the window entry of its index along axis 1 (the window is the user data).
FFTCallback window_prolog(std::vector<double>& window) {
  return FFTCallback::host_prolog<cd>(
      [](const void* in, std::uint64_t offset, void* info) {
        const double* w = fft_callback::user_data<const double>(info);
        return static_cast<const cd*>(in)[offset] * w[fft_callback::index(offset, info, 1)];
      },
      window.data());
}

std::vector<double> hann(std::int64_t n) {
  std::vector<double> w(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    w[static_cast<std::size_t>(j)] = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(j) / n);
  return w;
}

TEST(FftCallbacksCpu, PrologWindowsEveryLineOfAPaddedBatchAcrossChunks) {
  // 700 rows of 48 (rows padded to 52): about 1 MiB, so FFTW's loop runs several chunks.
  const std::vector<std::int64_t> shape{700, 48};
  auto a = HostArray<cd>::random(shape, {52, 1});
  std::vector<double> w = hann(48);
  FFT f(a.view(), {.axes = {1}, .execution = Execution::cpu(), .prolog = window_prolog(w)});
  f.plan();
  const std::vector<cd> before = a.buffer;
  std::vector<cd> windowed = a.dense();
  for (std::size_t i = 0; i < windowed.size(); ++i) windowed[i] *= w[i % 48];
  const auto expected = reference_dft(windowed, shape, {1}, -1);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), expected), 1e-12);
  EXPECT_EQ(a.buffer, before);  // the operand is read, never written (the prolog's values go to scratch)
}

TEST(FftCallbacksCpu, EpilogMultipliesAnR2CSpectrumByAFilter) {
  const std::vector<std::int64_t> shape{300, 128};
  auto a = HostArray<float>::random(shape);
  std::vector<cf> filter = random_vector<cf>(65);
  const auto epilog = FFTCallback::host_epilog<cf>(
      [](void* out, std::uint64_t offset, cf element, void* info) {
        const cf* h = fft_callback::user_data<const cf>(info);
        static_cast<cf*>(out)[offset] = element * h[fft_callback::index(offset, info, 1)];
      },
      filter.data());
  const Tensor y = rfft(a.view(), {.axes = {1}, .execution = Execution::cpu(), .epilog = epilog});
  auto expected = truncate_axis(reference_dft(a.dense(), shape, {1}, -1), shape, 1, 65);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] *= cd(filter[i % 65]);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(f32, 128));
}

// What the helpers say about every element the prolog loads and the epilog stores: the logical indices of the
// operand's (result's) element at that offset, each element exactly once.
struct Visits {
  std::vector<int> prolog_hits, epilog_hits;
  std::vector<cd> operand, stored;
  bool values_agree = true;
};

TEST(FftCallbacksCpu, PositionHelpersNameEachElementOnceInAColumnMajorOperand) {
  const std::vector<std::int64_t> shape{6, 5, 4};
  auto a = HostArray<cf>::random(shape, {1, 6, 30});  // column-major
  Visits visits;
  visits.prolog_hits.assign(120, 0);
  visits.epilog_hits.assign(120, 0);
  visits.operand = a.dense();
  const auto prolog = FFTCallback::host_prolog<cf>(
      [](const void* in, std::uint64_t offset, void* info) {
        auto& v = *fft_callback::user_data<Visits>(info);
        long long index[fft_callback::max_rank];
        fft_callback::indices(offset, info, index);
        const long long flat = fft_callback::flat_index(offset, info);
        if (flat != (index[0] * 5 + index[1]) * 4 + index[2] || fft_callback::rank(info) != 3) v.values_agree = false;
        ++v.prolog_hits[static_cast<std::size_t>(flat)];
        const cf value = static_cast<const cf*>(in)[offset];
        if (cd(value) != v.operand[static_cast<std::size_t>(flat)]) v.values_agree = false;
        return value;
      },
      &visits);
  const auto epilog = FFTCallback::host_epilog<cf>(
      [](void* out, std::uint64_t offset, cf element, void* info) {
        auto& v = *fft_callback::user_data<Visits>(info);
        const long long flat = fft_callback::flat_index(offset, info);
        ++v.epilog_hits[static_cast<std::size_t>(flat)];
        v.stored[static_cast<std::size_t>(flat)] = cd(element);
        static_cast<cf*>(out)[offset] = element;
      },
      &visits);
  visits.stored.assign(120, cd(NAN, NAN));
  FFT f(a.view(), {.axes = {0, 2}, .execution = Execution::cpu(), .prolog = prolog, .epilog = epilog});
  f.plan();
  const Tensor y = f.execute();
  EXPECT_TRUE(visits.values_agree);
  for (int hits : visits.prolog_hits) EXPECT_EQ(hits, 1);
  for (int hits : visits.epilog_hits) EXPECT_EQ(hits, 1);
  const auto expected = reference_dft(a.dense(), shape, {0, 2}, -1);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(f32, 24));
  EXPECT_LT(relative_error(visits.stored, expected), tolerance(f32, 24));
}

TEST(FftCallbacksCpu, InfoDecomposesPaddedOffsets) {
  fft_callback::Info info{};
  info.rank = 3;
  info.terms = 2;  // axis 1 has length 1
  info.extent[0] = 3;
  info.stride[0] = 40;
  info.reciprocal[0] = 1.0 / 40;
  info.dense_stride[0] = 7;
  info.axis[0] = 0;
  info.extent[1] = 7;
  info.stride[1] = 2;
  info.reciprocal[1] = 1.0 / 2;
  info.dense_stride[1] = 1;
  info.axis[1] = 2;
  long long index[fft_callback::max_rank];
  fft_callback::indices(2 * 40 + 5 * 2, &info, index);
  EXPECT_EQ(index[0], 2);
  EXPECT_EQ(index[1], 0);
  EXPECT_EQ(index[2], 5);
  EXPECT_EQ(fft_callback::index(2 * 40 + 5 * 2, &info, 2), 5);
  EXPECT_EQ(fft_callback::index(2 * 40 + 5 * 2, &info, 1), 0);
  EXPECT_EQ(fft_callback::flat_index(2 * 40 + 5 * 2, &info), 2 * 7 + 5);
}

TEST(FftCallbacksCpu, InPlaceR2CWithAPrologAndInverseNormalizationAfterTheEpilog) {
  // R2C in place over padded rows (2 * (16/2 + 1) = 18 reals); the prolog doubles, the epilog adds 1 and the
  // forward normalization then scales what the epilog stored.
  const std::vector<std::int64_t> shape{9, 16};
  auto a = HostArray<double>::random(shape, {18, 1});
  a.buffer.resize(9 * 18);  // room for the last row's 9 complex results
  const std::vector<cd> input = a.dense();
  const auto prolog = FFTCallback::host_prolog<double>(
      [](const void* in, std::uint64_t offset, void*) { return 2.0 * static_cast<const double*>(in)[offset]; });
  const auto epilog = FFTCallback::host_epilog<cd>([](void* out, std::uint64_t offset, cd element, void*) {
    static_cast<cd*>(out)[offset] = element + cd(1.0, 0.0);
  });
  FFT f(a.view(), {.axes = {1},
                   .inplace = true,
                   .normalization = Normalization::forward,
                   .execution = Execution::cpu(),
                   .prolog = prolog,
                   .epilog = epilog});
  f.plan();
  const Tensor y = f.execute();
  auto expected = truncate_axis(reference_dft(scaled(input, 2.0), shape, {1}, -1), shape, 1, 9);
  for (auto& v : expected) v = (v + 1.0) / 16.0;
  EXPECT_LT(relative_error(to_dense(y.view()), expected), 1e-12);
}

TEST(FftCallbacksCpu, C2RPrologMultipliesTheSpectrumOfAConvolutionAcrossChunks) {
  // Circular convolution of 600 rows of 64 with one filter: R2C, then C2R with the product in its prolog.
  const std::vector<std::int64_t> shape{600, 64};
  auto a = HostArray<double>::random(shape);
  auto h = HostArray<double>::random({64});
  const Tensor spectrum = rfft(a.view(), {.axes = {1}, .execution = Execution::cpu()});
  const Tensor filter = rfft(h.view(), {.execution = Execution::cpu()});
  const auto prolog = FFTCallback::host_prolog<cd>(
      [](const void* in, std::uint64_t offset, void* info) {
        const cd* k = fft_callback::user_data<const cd>(info);
        return static_cast<const cd*>(in)[offset] * k[fft_callback::index(offset, info, 1)];
      },
      const_cast<cd*>(filter.data<cd>()));
  const Tensor y =
      irfft(spectrum,
            {.axes = {1}, .normalization = Normalization::inverse, .execution = Execution::cpu(), .prolog = prolog});
  const std::vector<cd> x = a.dense();
  EXPECT_LT(relative_error(to_dense(y.view()), circular_convolution_rows(x, h.dense(), 600, 64)), 1e-12);
  // The operand of the C2R (the spectrum) is unchanged: the prolog's values went to scratch, not over it.
  EXPECT_LT(relative_error(to_dense(spectrum.view()), truncate_axis(reference_dft(x, shape, {1}, -1), shape, 1, 33)),
            1e-12);
}

TEST(FftCallbacksCpu, UserDataChangesBetweenExecutesWithoutANewPlan) {
  const std::vector<std::int64_t> shape{8, 32};
  auto a = HostArray<cd>::random(shape);
  double two = 2.0, five = 5.0;
  const auto prolog = FFTCallback::host_prolog<cd>(
      [](const void* in, std::uint64_t offset, void* info) {
        return static_cast<const cd*>(in)[offset] * *fft_callback::user_data<const double>(info);
      },
      &two);
  FFT f(a.view(), {.axes = {1}, .execution = Execution::cpu(), .prolog = prolog});
  f.plan();
  const auto reference = reference_dft(a.dense(), shape, {1}, -1);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), scaled(reference, 2.0)), 1e-12);
  EXPECT_LT(relative_error(to_dense(f.execute({.prolog_data = &five}).view()), scaled(reference, 5.0)), 1e-12);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), scaled(reference, 5.0)), 1e-12);  // it stays
  EXPECT_THROW(f.execute({.epilog_data = &five}), StateError);

  FFT plain(a.view(), {.axes = {1}, .execution = Execution::cpu()});
  plain.plan();
  try {
    plain.execute({.prolog_data = &two});
    ADD_FAILURE() << "expected StateError";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("prolog_data"), std::string::npos) << e.what();
  }
}

TEST(FftCallbacksCpu, FunctionFormsKeyPlansByTheCallbackAndTakeEachCallsUserData) {
  const std::vector<std::int64_t> shape{4, 64};
  auto a = HostArray<cd>::random(shape);
  const auto reference = reference_dft(a.dense(), shape, {1}, -1);
  double three = 3.0, seven = 7.0;
  const auto by_user_data = FFTCallback::host_prolog<cd>(
      [](const void* in, std::uint64_t offset, void* info) {
        return static_cast<const cd*>(in)[offset] * *fft_callback::user_data<const double>(info);
      },
      &three);
  const auto negate = FFTCallback::host_prolog<cd>(
      [](const void* in, std::uint64_t offset, void*) { return -static_cast<const cd*>(in)[offset]; });
  plan_cache::clear();
  plan_cache::reset_stats();
  const FFTOptions base{.axes = {1}, .execution = Execution::cpu()};
  FFTOptions o = base;
  o.prolog = by_user_data;
  EXPECT_LT(relative_error(to_dense(fft(a.view(), o).view()), scaled(reference, 3.0)), 1e-12);
  o.prolog = by_user_data.with_user_data(&seven);  // same identity: the cached plan, with this call's user data
  EXPECT_LT(relative_error(to_dense(fft(a.view(), o).view()), scaled(reference, 7.0)), 1e-12);
  o.prolog = negate;  // another callable: another plan
  EXPECT_LT(relative_error(to_dense(fft(a.view(), o).view()), scaled(reference, -1.0)), 1e-12);
  EXPECT_LT(relative_error(to_dense(fft(a.view(), base).view()), reference), 1e-12);  // and none: another
  const PlanCacheStats stats = plan_cache::stats();
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.hits, 1u);

  // Identities of the GPU forms: the code and symbol, not the user data.
  const auto s1 = FFTCallback::cuda_source("__device__ float2 f(void*, unsigned long long, void*, void*);", "f");
  const auto s2 = FFTCallback::cuda_source("__device__ float2 f(void*, unsigned long long, void*, void* );", "f");
  const auto s3 = FFTCallback::cuda_source("__device__ float2 f(void*, unsigned long long, void*, void*);", "g");
  EXPECT_EQ(s1.identity(0), s1.with_user_data(&three).identity(0));
  EXPECT_NE(s1.identity(0), s2.identity(0));
  EXPECT_NE(s1.identity(0), s3.identity(0));
  const std::vector<unsigned char> bytes{1, 2, 3};
  EXPECT_EQ(FFTCallback::lto_ir(bytes, "f").identity(1), FFTCallback::lto_ir(bytes.data(), 3, "f").identity(1));
  EXPECT_NE(FFTCallback::lto_ir(bytes, "f").identity(0), FFTCallback::lto_ir({1, 2, 4}, "f").identity(0));
  EXPECT_NE(negate.identity(0), by_user_data.identity(0));
}

cf conjugate_load(const void* in, std::uint64_t offset, void*) {
  return std::conj(static_cast<const cf*>(in)[offset]);
}

TEST(FftCallbacksCpu, ChunksRunOnSeveralThreadsEachElementOnceAndAThrowReachesTheCaller) {
  // 256 rows of 512: four chunks of 64 rows (512 KiB of input and output each), shared among four threads.
  const std::vector<std::int64_t> shape{256, 512};
  auto a = HostArray<cf>::random(shape);
  struct Seen {
    std::vector<std::atomic<int>> hits;
    std::mutex mutex;
    std::set<std::thread::id> threads;
    float factor = 0.5F;
  } seen{std::vector<std::atomic<int>>(256 * 512), {}, {}, 0.5F};
  const auto prolog = FFTCallback::host_prolog<cf>(
      [](const void* in, std::uint64_t offset, void* info) {
        auto& s = *fft_callback::user_data<Seen>(info);
        s.hits[offset].fetch_add(1, std::memory_order_relaxed);
        if (offset % 512 == 0) {
          const std::lock_guard lock(s.mutex);
          s.threads.insert(std::this_thread::get_id());
        }
        return static_cast<const cf*>(in)[offset] * s.factor;
      },
      &seen);
  const Tensor y = fft(a.view(), {.axes = {1}, .execution = Execution::cpu(4), .prolog = prolog});
  for (const auto& h : seen.hits) ASSERT_EQ(h.load(), 1);
  EXPECT_GT(seen.threads.size(), 1U) << "the four chunks ran on one thread";
  std::vector<cd> scaled = a.dense();
  for (auto& v : scaled) v *= 0.5;
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(scaled, shape, {1}, -1)), tolerance(f32, 512));

  // An epilog that throws in the last chunk: the execute raises it once the other threads have stopped, and the
  // object runs again afterwards.
  std::atomic<bool> fail{true};
  const auto epilog = FFTCallback::host_epilog<cf>(
      [](void* out, std::uint64_t offset, cf v, void* info) {
        if (offset == 255 * 512 + 7 && fft_callback::user_data<std::atomic<bool>>(info)->load())
          throw std::runtime_error("epilog refused element 255, 7");
        static_cast<cf*>(out)[offset] = v;
      },
      &fail);
  FFT f(a.view(), {.axes = {1}, .execution = Execution::cpu(4), .epilog = epilog});
  f.plan();
  EXPECT_THROW(f.execute(), std::runtime_error);
  fail = false;
  Tensor out = Tensor::empty({256, 512}, c64);
  for (std::int64_t i = 0; i < out.numel(); ++i) out.data<cf>()[i] = cf(NAN, NAN);  // every element must be written
  f.execute({.out = out.view()});
  EXPECT_LT(relative_error(to_dense(out.view()), reference_dft(a.dense(), shape, {1}, -1)), tolerance(f32, 512));
}

TEST(FftCallbacksCpu, FunctionPointersAndStatefulCallablesWork) {
  const std::vector<std::int64_t> shape{40, 32};
  auto a = HostArray<cf>::random(shape);
  long stores = 0;  // a mutable callable's own state, counted per element stored
  const auto epilog = FFTCallback::host_epilog<cf>([&stores](void* out, std::uint64_t offset, cf v, void*) mutable {
    ++stores;
    static_cast<cf*>(out)[offset] = v;
  });
  const Tensor y = fft(a.view(), {.axes = {1},
                                  .execution = Execution::cpu(),
                                  .prolog = FFTCallback::host_prolog<cf>(&conjugate_load),
                                  .epilog = epilog});
  std::vector<cd> conjugated = a.dense();
  for (auto& v : conjugated) v = std::conj(v);
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(conjugated, shape, {1}, -1)), tolerance(f32, 32));
  EXPECT_EQ(stores, 40 * 32);
  EXPECT_THROW(FFTCallback::host_prolog<cf>(static_cast<cf (*)(const void*, std::uint64_t, void*)>(nullptr)),
               InvalidArgument);
}

TEST(FftCallbacksCpu, CallbacksTheCpuCannotRunAreRefusedNamingThem) {
  auto a = HostArray<cd>::random({4, 16});
  const auto expect_error = [&](FFTOptions options, const std::string& callback, const std::string& words) {
    options.execution = Execution::cpu();
    try {
      FFT f(a.view(), options);
      ADD_FAILURE() << "expected CallbackError mentioning " << words;
    } catch (const CallbackError& e) {
      EXPECT_EQ(e.callback(), callback);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(callback), std::string::npos) << e.what();
    }
  };
  expect_error({.prolog = FFTCallback::cuda_source("__device__ double2 f(void*, unsigned long long, void*, void*) "
                                                   "{ return double2{}; }",
                                                   "f")},
               "prolog 'f'", "CUDA source cannot run on the CPU");
  expect_error({.epilog = FFTCallback::lto_ir({1, 2, 3}, "g")}, "epilog 'g'", "cannot run on the CPU");
  // Wrong element type (c64 for a c128 transform), and an epilog given as the prolog.
  expect_error({.prolog = FFTCallback::host_prolog<cf>([](const void*, std::uint64_t, void*) { return cf{}; })},
               "prolog (host callable)",
               "needs a HostProlog<std::complex<double>>, got a HostProlog<std::complex<float>>");
  expect_error({.prolog = FFTCallback::host_epilog<cd>([](void*, std::uint64_t, cd, void*) {})},
               "prolog (host callable)", "got a HostEpilog<std::complex<double>>");
  // An R2C prolog loads reals.
  auto r = HostArray<float>::random({4, 16});
  try {
    FFT f(r.view(), {.execution = Execution::cpu(),
                     .prolog = FFTCallback::host_prolog<cf>([](const void*, std::uint64_t, void*) { return cf{}; })});
    ADD_FAILURE() << "expected CallbackError";
  } catch (const CallbackError& e) {
    EXPECT_NE(std::string(e.what()).find("HostProlog<float>"), std::string::npos) << e.what();
    EXPECT_TRUE(e.log().empty());
  }
  // A CallbackError is an InvalidArgument.
  EXPECT_THROW(FFT(a.view(), {.execution = Execution::cpu(), .epilog = FFTCallback::lto_ir({1}, "g")}),
               InvalidArgument);
  EXPECT_THROW(FFTCallback::cuda_source("", "f"), InvalidArgument);
  EXPECT_THROW(FFTCallback::cuda_source("x", ""), InvalidArgument);
  EXPECT_THROW(FFTCallback::lto_ir(std::vector<unsigned char>{}, "f"), InvalidArgument);
  EXPECT_THROW(FFTCallback::host_prolog<cd>(HostProlog<cd>{}), InvalidArgument);
}

}  // namespace
}  // namespace cuplan::testing
