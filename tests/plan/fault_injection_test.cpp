// SPDX-License-Identifier: Apache-2.0
// Allocation fault injection over every path that allocates (docs/dev/testing.md, "Fault injection"). cuplan allocates
// operand, result, workspace and staging memory in one place, Storage::allocate, with one allocation call per
// memory kind: device (cudaMallocFromPoolAsync), pinned (cudaMallocHost) and host (aligned operator new). The
// pinned rows are the staging engine of host-operand FFTs, whose pinned ring belongs to the (cleared) plan, a result
// large enough to be pinned, and the copy engine, whose slots the process keeps (the row gives them back first). Each
// row of the table below is a path (plan, execute, autotune, staging, result allocation, copy) and the kind it
// allocates; the test counts that path's allocations of the kind, then fails each of them in turn and requires
// OutOfMemory naming the requested bytes, live allocations back where they were (and the device pool's use), and
// the same result bit for bit once memory is back. The closing line prints the coverage.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/fault_injection.hpp"
#include "cuplan/cuplan.hpp"
#include "plan/staging/staged_copy.hpp"
#include "runtime/storage.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

namespace fault = detail::fault;
using C = std::complex<float>;

// A result as raw bytes on the host, for bit-for-bit comparison.
std::vector<unsigned char> bytes_of(const Tensor& t) {
  Tensor host = Tensor::empty(t.shape(), t.dtype(), Device::cpu());
  copy(t, host);
  std::vector<unsigned char> out(static_cast<std::size_t>(t.numel()) * t.dtype().size());
  std::memcpy(out.data(), host.data(), out.size());
  return out;
}

Tensor random_tensor(Shape shape, DType dtype, Device device) {
  const std::size_t reals = static_cast<std::size_t>(checked_numel(shape)) * (dtype.size() / 4);
  std::vector<float> values = cuplan::testing::random_vector<float>(reals);
  Tensor t = Tensor::empty(shape, dtype, device);
  copy(TensorView(values.data(), dtype, shape), t);
  return t;
}

struct Path {
  const char* name;                               // the path that allocates
  fault::Site site;                               // the memory kind it allocates
  bool gpu;                                       // needs a CUDA device
  std::function<std::function<Tensor()>()> make;  // builds the objects once, returns the call to fail
};

Device gpu() {
  return Device::cuda(0);
}

// FFT along axis 1 of a host operand with CUDA execution, which stages through pinned and device memory.
std::function<Tensor()> host_operand_fft() {
  auto x = std::make_shared<Tensor>(random_tensor(Shape{256, 128}, c64, Device::cpu()));
  return [x] {
    plan_cache::clear();  // a cached plan keeps its staging buffers: allocate them anew
    return fft(*x, {.axes = {1}, .execution = Execution::cuda(0)});
  };
}

std::vector<Path> paths() {
  std::vector<Path> table;
  // CPU paths: host memory.
  table.push_back({"fft function form, CPU: result", fault::Site::host, false, [] {
                     auto x = std::make_shared<Tensor>(random_tensor(Shape{16, 24}, c64, Device::cpu()));
                     return std::function<Tensor()>([x] { return fft(*x, {.execution = Execution::cpu(1)}); });
                   }});
  table.push_back({"FFT::execute, CPU: result", fault::Site::host, false, [] {
                     auto x = std::make_shared<Tensor>(random_tensor(Shape{8, 30}, c64, Device::cpu()));
                     auto plan = std::make_shared<FFT>(*x, FFTOptions{.axes = {1}, .execution = Execution::cpu(1)});
                     plan->plan();
                     return std::function<Tensor()>([x, plan] { return plan->execute(); });
                   }});
  table.push_back({"matmul function form, CPU: result", fault::Site::host, false, [] {
                     auto a = std::make_shared<Tensor>(random_tensor(Shape{12, 7}, f32, Device::cpu()));
                     auto b = std::make_shared<Tensor>(random_tensor(Shape{7, 5}, f32, Device::cpu()));
                     return std::function<Tensor()>(
                         [a, b] { return matmul(*a, *b, {.execution = Execution::cpu(1)}); });
                   }});
  table.push_back({"Matmul::execute, CPU: result", fault::Site::host, false, [] {
                     auto a = std::make_shared<Tensor>(random_tensor(Shape{9, 4}, f32, Device::cpu()));
                     auto b = std::make_shared<Tensor>(random_tensor(Shape{4, 6}, f32, Device::cpu()));
                     auto m = std::make_shared<Matmul>(*a, *b, MatmulOptions{.execution = Execution::cpu(1)});
                     m->plan();
                     return std::function<Tensor()>([a, b, m] { return m->execute(); });
                   }});
  table.push_back({"matmul function form, CPU, broadcast operand: copy for BLAS, result", fault::Site::host, false, [] {
                     auto a = std::make_shared<Tensor>(random_tensor(Shape{6, 7}, f32, Device::cpu()));
                     auto b = std::make_shared<Tensor>(random_tensor(Shape{7, 5}, f32, Device::cpu()));
                     return std::function<Tensor()>([a, b] {
                       // A's rows all one row (stride 0): copied densely for BLAS.
                       const TensorView rows(a->data(), f32, Shape{6, 7}, Strides{0, 1});
                       return matmul(rows, *b, {.execution = Execution::cpu(1)});
                     });
                   }});
  table.push_back({"fftconvolve function form, CPU: padded kernel, result", fault::Site::host, false, [] {
                     auto x = std::make_shared<Tensor>(random_tensor(Shape{4, 40}, f32, Device::cpu()));
                     auto k = std::make_shared<Tensor>(random_tensor(Shape{1, 5}, f32, Device::cpu()));
                     return std::function<Tensor()>(
                         [x, k] { return fftconvolve(*x, *k, {.execution = Execution::cpu(1)}); });
                   }});
  table.push_back(
      {"Convolution::execute releasing its buffers, CPU: work buffers, result", fault::Site::host, false, [] {
         auto x = std::make_shared<Tensor>(random_tensor(Shape{1200, 50}, f32, Device::cpu()));
         auto k = std::make_shared<Tensor>(random_tensor(Shape{1, 7}, f32, Device::cpu()));
         auto conv = std::make_shared<Convolution>(*x, *k, ConvolutionOptions{.execution = Execution::cpu(2)});
         conv->plan();
         // Every execute allocates the work buffers again: a failed one must leave none half made.
         return std::function<Tensor()>([x, conv] { return conv->execute({.release_workspace = true}); });
       }});
  table.push_back({"copy, overlapping host views: staging", fault::Site::host, false, [] {
                     auto original = std::make_shared<Tensor>(random_tensor(Shape{257}, f32, Device::cpu()));
                     auto x = std::make_shared<Tensor>(Tensor::empty(Shape{257}, f32, Device::cpu()));
                     return std::function<Tensor()>([original, x] {
                       copy(*original, *x);  // the same input every call
                       const TensorView whole = x->view();
                       const TensorView src(whole.data(), f32, Shape{256});
                       const TensorView dst(static_cast<float*>(whole.data()) + 1, f32, Shape{256});
                       copy(src, dst);  // memmove semantics through a staging buffer
                       Tensor out = Tensor::empty(Shape{257}, f32, Device::cpu());
                       copy(*x, out);
                       return out;
                     });
                   }});
  // GPU paths: device and pinned memory.
  table.push_back({"FFT::plan + execute, GPU: workspace, result", fault::Site::device, true, [] {
                     auto x = std::make_shared<Tensor>(random_tensor(Shape{64, 96}, c64, gpu()));
                     return std::function<Tensor()>([x] {
                       FFT plan(*x);
                       plan.plan();
                       return plan.execute();
                     });
                   }});
  table.push_back({"FFT::execute, GPU, strided operand: input copy, result", fault::Site::device, true, [] {
                     auto base = std::make_shared<Tensor>(random_tensor(Shape{64, 2, 48}, c64, gpu()));
                     const TensorView v = base->view();
                     auto plan = std::make_shared<FFT>(TensorView(v.data(), c64, Shape{64, 48}, {96, 1}, gpu()));
                     plan->plan();
                     return std::function<Tensor()>([base, plan] { return plan->execute(); });
                   }});
  table.push_back({"Matmul::plan + autotune + execute, GPU: workspace, scratch, result", fault::Site::device, true, [] {
                     auto a = std::make_shared<Tensor>(random_tensor(Shape{64, 32}, f32, gpu()));
                     auto b = std::make_shared<Tensor>(random_tensor(Shape{32, 48}, f32, gpu()));
                     return std::function<Tensor()>([a, b] {
                       Matmul m(*a, *b);
                       m.plan();
                       m.autotune({.iterations = 1});
                       return m.execute();
                     });
                   }});
  table.push_back({"FFT, GPU, host operand: staging engine", fault::Site::pinned, true, host_operand_fft});
  table.push_back({"FFT, GPU, 2 MiB host operand: staging engine, pinned result", fault::Site::pinned, true, [] {
                     auto x = std::make_shared<Tensor>(random_tensor(Shape{512, 512}, c64, Device::cpu()));
                     return std::function<Tensor()>([x] {
                       plan_cache::clear();
                       Tensor y = fft(*x, {.axes = {1}, .execution = Execution::cuda(0)});
                       EXPECT_EQ(y.memory_space(), MemorySpace::host_pinned) << "a 2 MiB result is made pinned";
                       return y;
                     });
                   }});
  table.push_back(
      {"copy, GPU, 16 MiB pageable to device and back: copy engine's pinned slots", fault::Site::pinned, true, [] {
         auto host = std::make_shared<Tensor>(random_tensor(Shape{4 << 20}, f32, Device::cpu()));
         return std::function<Tensor()>([host] {
           detail::release_staged_copier();  // kept for the process otherwise: allocate them anew
           Tensor device = Tensor::empty(host->shape(), f32, gpu());
           copy(*host, device);  // the engine's upload slots; reading it back makes its download slots
           return device;
         });
       }});
  table.push_back({"FFT, GPU, host operand: device staging", fault::Site::device, true, host_operand_fft});
  table.push_back({"matmul, GPU, host operands: staging", fault::Site::device, true, [] {
                     auto a = std::make_shared<Tensor>(random_tensor(Shape{128, 64}, f32, Device::cpu()));
                     auto b = std::make_shared<Tensor>(random_tensor(Shape{64, 32}, f32, Device::cpu()));
                     return std::function<Tensor()>([a, b] {
                       plan_cache::clear();
                       return matmul(*a, *b, {.execution = Execution::cuda(0)});
                     });
                   }});
  return table;
}

struct Snapshot {
  fault::Live live[fault::site_count];
  std::size_t pool_used = 0;
};

Snapshot snapshot(bool gpu_path) {
  Snapshot s;
  if (gpu_path) {
    (void)cudaDeviceSynchronize();  // stream-ordered frees land
    s.pool_used = detail::pool_statistics(0).used;
  }
  for (int i = 0; i < fault::site_count; ++i) s.live[i] = fault::live(static_cast<fault::Site>(i));
  return s;
}

// Nothing leaked: no more is held than before the failed call. An object may hold less afterwards (the staging
// engine gives its buffers back when a chunk fails, and makes them again on the next call).
void expect_no_more(const Snapshot& before, const Snapshot& after, const std::string& where) {
  for (int i = 0; i < fault::site_count; ++i) {
    EXPECT_LE(after.live[i].allocations, before.live[i].allocations)
        << where << ": live " << fault::to_string(static_cast<fault::Site>(i)) << " allocations";
    EXPECT_LE(after.live[i].bytes, before.live[i].bytes)
        << where << ": live " << fault::to_string(static_cast<fault::Site>(i)) << " bytes";
  }
  EXPECT_LE(after.pool_used, before.pool_used) << where << ": device pool use";
}

class FaultInjectionTest : public ::testing::Test {
 protected:
  void TearDown() override { fault::disarm(); }
};

TEST_F(FaultInjectionTest, EveryAllocationOfEveryPathFailsCleanlyAndThePathWorksAfterwards) {
  const bool have_gpu = cuda_available();
  std::set<fault::Site> sites_covered;
  int paths_run = 0, paths_skipped = 0;
  for (const Path& path : paths()) {
    SCOPED_TRACE(path.name);
    if (path.gpu && !have_gpu) {
      ++paths_skipped;
      continue;
    }
    std::function<Tensor()> call = path.make();
    const std::vector<unsigned char> expected = bytes_of(call());  // warm: plans cached, engines set up
    // Count this path's allocations of its kind (armed far past them: none fails).
    fault::arm(path.site, std::int64_t{1} << 40);
    (void)bytes_of(call());
    const std::int64_t count = fault::attempts(path.site);
    fault::disarm();
    ASSERT_GT(count, 0) << "the path allocates no " << fault::to_string(path.site) << " memory";
    for (std::int64_t n = 1; n <= count; ++n) {
      const std::string where = std::string(path.name) + ", allocation " + std::to_string(n);
      const Snapshot before = snapshot(path.gpu);
      fault::arm(path.site, n);
      try {
        Tensor result = call();
        (void)bytes_of(result);
        ADD_FAILURE() << where << ": expected OutOfMemory";
      } catch (const OutOfMemory& e) {
        EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << where << ": " << e.what();
      }
      EXPECT_TRUE(fault::fired()) << where;
      fault::disarm();
      expect_no_more(before, snapshot(path.gpu), where);
      EXPECT_EQ(bytes_of(call()), expected) << where << ": the path must work once memory is back";
    }
    sites_covered.insert(path.site);
    ++paths_run;
  }
  std::printf(
      "fault injection: %d paths run, %d skipped (no GPU); allocation sites covered: %zu of %d found "
      "(device, pinned, host: Storage::allocate and the CPU backends' HostArray scratch)\n",
      paths_run, paths_skipped, sites_covered.size(), fault::site_count);
  if (!have_gpu) GTEST_SKIP() << "no CUDA device: the device and pinned paths of the table need a GPU (host paths ran)";
}

TEST_F(FaultInjectionTest, MessagesNameTheRequestedSize) {
  fault::arm(fault::Site::host, 1);
  try {
    (void)Tensor::empty(Shape{1000}, f64, Device::cpu());
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("8000 bytes of host memory"), std::string::npos) << e.what();
  }
  // One shot: the next allocation works.
  EXPECT_NO_THROW((void)Tensor::empty(Shape{1000}, f64, Device::cpu()));
}

}  // namespace
}  // namespace cuplan
