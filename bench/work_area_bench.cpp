// SPDX-License-Identifier: Apache-2.0
// Work areas owned against shared (docs/performance.md, "Work areas"): 16 FFTs of distinct shapes (1D to 3D, C2C and
// R2C, c64 8192^2 and 2^20-point rows x 64 among them) used in turn on one stream, one set of objects per policy
// over the same operands and outputs.
//   (a) device bytes of work areas held: owned (the sum of every plan's area) against shared (the largest one), and
//       every cuplan byte on the device after each set ran once;
//   (b) GPU time per call of each shape, shared / owned (CUDA events, the 16 in turn, median of the rounds);
//   (c) host time of a small execute (c64 [64, 256]) with the stream kept busy, shared / owned.
// bench/peers/nvmath_fft_work_areas.py runs nvmath-python on the same 16 plans beside it.
// Usage: work_area_bench [--quick] [--csv PATH]. Needs a GPU (says so and exits 0 without one).

#include <cuda_runtime_api.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/format.hpp>

#include "support/bench_csv.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;

namespace {

struct Case {
  cp::Shape shape;
  cp::DType dtype;  // c64: C2C, f32: R2C
  std::vector<int> axes;
};

std::vector<Case> cases(bool quick) {
  const long long big = quick ? 1024 : 8192, row = quick ? (1 << 16) : (1 << 20), cube = quick ? 128 : 512;
  return {
      {{big, big}, cp::c64, {0, 1}},
      {{64, row}, cp::c64, {1}},
      {{64, row}, cp::f32, {1}},
      {{big, big}, cp::f32, {0, 1}},
      {{cube, cube, cube}, cp::c64, {0, 1, 2}},
      {{cube, cube, cube}, cp::f32, {0, 1, 2}},
      {{256, 256, 256}, cp::c64, {0, 1, 2}},
      {{128, 128, 128}, cp::f32, {0, 1, 2}},
      {{4096, 16384}, cp::c64, {1}},
      {{4096, 16384}, cp::f32, {1}},
      {{1024, 4099}, cp::c64, {1}},
      {{16, 1 << 22}, cp::c64, {1}},
      {{2048, 2048}, cp::c64, {0, 1}},
      {{1024, 1024}, cp::f32, {0, 1}},
      {{32768, 1024}, cp::c64, {0}},
      {{8, 1000003}, cp::c64, {1}},
  };
}

std::string name_of(const Case& c) {
  std::string text = c.dtype == cp::c64 ? "C2C c64 [" : "R2C f32 [";
  for (int i = 0; i < c.shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(c.shape[i]);
  }
  text += "] axes";
  for (int axis : c.axes) {
    text += ' ';
    text += std::to_string(axis);
  }
  return text;
}

cp::Tensor random_tensor(const cp::Shape& shape, cp::DType dtype, cp::StreamRef s) {
  const std::size_t values = static_cast<std::size_t>(cp::checked_numel(shape)) * (dtype == cp::c64 ? 2 : 1);
  std::vector<float> host(values);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (float& v : host) v = u(rng);
  cp::Tensor t = cp::Tensor::empty(shape, dtype, cp::Device::cuda(0), s);
  cp::copy(cp::TensorView(host.data(), dtype, shape), t.view(), s);
  s.synchronize();  // `host` goes out of scope
  return t;
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / double(1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options options = bench::parse_options(argc, argv);
  const bool quick = options.quick;
  bench::Csv csv(options.csv, "work_area");
  try {
    if (!cp::cuda_available()) {
      std::printf("no CUDA device: work_area_bench skipped\n");
      return 0;
    }
    cudaDeviceProp prop{};
    BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("cuplan work areas, owned against shared, on %s%s\n", prop.name,
                quick ? " (--quick: small sizes, few repetitions)" : "");
    cp::Stream s;
    const cp::Device gpu = cp::Device::cuda(0);
    cp::memory::release_work_areas(gpu);
    const std::vector<Case> table = cases(quick);
    std::vector<cp::Tensor> operands, outputs;
    for (const Case& c : table) operands.push_back(random_tensor(c.shape, c.dtype, s));
    auto make_set = [&](cp::WorkAreaPolicy policy) {
      std::vector<cp::FFT> set;
      for (std::size_t i = 0; i < table.size(); ++i) {
        set.emplace_back(operands[i], cp::FFTOptions{.axes = table[i].axes, .stream = s, .work_area = policy});
        set.back().plan();
      }
      return set;
    };
    auto run_set = [&](std::vector<cp::FFT>& set) {
      for (std::size_t i = 0; i < set.size(); ++i) (void)set[i].execute({.out = outputs[i].view()});
    };

    // (a) Memory: each set alone, after each of its plans ran once.
    std::vector<cp::FFT> owned = make_set(cp::WorkAreaPolicy::owned);
    for (const cp::FFT& f : owned) outputs.push_back(cp::Tensor::empty(f.result_shape(), f.result_dtype(), gpu, s));
    run_set(owned);
    s.synchronize();
    std::size_t sum = 0, largest = 0;
    for (const cp::FFT& f : owned) {
      sum += f.workspace_size();
      largest = std::max(largest, f.workspace_size());
    }
    const cp::memory::Report owned_report = cp::memory::report(gpu);
    const std::size_t with_owned = cp::memory::stats(gpu).bytes_in_use;
    owned.clear();
    std::vector<cp::FFT> shared = make_set(cp::WorkAreaPolicy::shared);
    run_set(shared);
    s.synchronize();
    const cp::memory::Report shared_report = cp::memory::report(gpu);
    const std::size_t with_shared = cp::memory::stats(gpu).bytes_in_use;
    std::printf(
        "(a) work-area bytes held by the 16 plans: owned %.1f MiB (%zu areas; the plans' sum %.1f MiB), "
        "shared %.1f MiB (%zu area; the largest plan's %.1f MiB), ratio %.3f\n",
        mib(owned_report.owned_work_area_bytes), owned_report.owned_work_areas, mib(sum),
        mib(shared_report.shared_work_area_bytes), shared_report.shared_work_areas, mib(largest),
        static_cast<double>(shared_report.shared_work_area_bytes) /
            static_cast<double>(std::max<std::size_t>(owned_report.owned_work_area_bytes, 1)));
    std::printf(
        "    every cuplan byte on the device (operands, outputs, areas): owned set %.1f MiB, shared set %.1f "
        "MiB\n    %s\n",
        mib(with_owned), mib(with_shared), fmt::format("{}", shared_report).c_str());
    csv.row("a", "16 FFTs work areas", "shared", static_cast<double>(shared_report.shared_work_area_bytes), "B",
            "owned", static_cast<double>(owned_report.owned_work_area_bytes));
    csv.row("a", "16 FFTs all device bytes", "shared", static_cast<double>(with_shared), "B", "owned",
            static_cast<double>(with_owned));
    owned = make_set(cp::WorkAreaPolicy::owned);

    // (b) GPU time per call, each shape in turn; the two sets alternate round by round.
    const int reps = quick ? 5 : 15;
    std::printf("(b) GPU time per call, the 16 in turn on one stream (median of %d rounds)\n", reps);
    std::printf("    %-40s %10s %10s %7s\n", "shape", "owned ms", "shared ms", "ratio");
    double total_owned = 0, total_shared = 0;
    for (std::size_t i = 0; i < table.size(); ++i) {
      std::vector<double> t_owned, t_shared;
      for (int r = 0; r < reps; ++r) {
        // The shapes before it ran just before, as in the loop of an application: the area was another plan's.
        const std::size_t previous = (i + table.size() - 1) % table.size();
        (void)owned[previous].execute({.out = outputs[previous].view()});
        t_owned.push_back(
            bench::gpu_median_ms(s.native(), 0, 1, [&] { (void)owned[i].execute({.out = outputs[i].view()}); }));
        (void)shared[previous].execute({.out = outputs[previous].view()});
        t_shared.push_back(
            bench::gpu_median_ms(s.native(), 0, 1, [&] { (void)shared[i].execute({.out = outputs[i].view()}); }));
      }
      const double o = bench::median(t_owned), sh = bench::median(t_shared);
      total_owned += o;
      total_shared += sh;
      std::printf("    %-40s %10.4f %10.4f %7.3f\n", name_of(table[i]).c_str(), o, sh, sh / o);
      csv.row("b", name_of(table[i]), "shared", sh, "ms", "owned", o);
    }
    std::printf("    %-40s %10.4f %10.4f %7.3f\n", "all 16", total_owned, total_shared, total_shared / total_owned);
    csv.row("b", "all 16 in turn", "shared", total_shared, "ms", "owned", total_owned);

    // (c) Host cost of a small execute, stream kept busy so that only the host side is timed.
    cp::Tensor small = random_tensor({64, 256}, cp::c64, s);
    cp::Tensor small_out = cp::Tensor::empty({64, 256}, cp::c64, gpu, s);
    cp::FFT small_owned(small, {.axes = {1}, .stream = s, .work_area = cp::WorkAreaPolicy::owned});
    cp::FFT small_shared(small, {.axes = {1}, .stream = s, .work_area = cp::WorkAreaPolicy::shared});
    small_owned.plan();
    small_shared.plan();
    const std::vector<double> us =
        bench::host_us_per_call(s.native(), quick ? 5 : 21, 200,
                                {[&] { (void)small_owned.execute({.out = small_out.view()}); },
                                 [&] { (void)small_shared.execute({.out = small_out.view()}); }});
    std::printf("(c) host time of a small execute (c64 [64, 256] axis 1): owned %.3f us, shared %.3f us, ratio %.3f\n",
                us[0], us[1], us[1] / us[0]);
    csv.row("c", "execute c64 [64, 256] host time", "shared", us[1], "us", "owned", us[0]);
    s.synchronize();
    return 0;
  } catch (const cp::Error& e) {
    std::fprintf(stderr, "cuplan error: %s\n", e.what());
    return 1;
  }
}
