// SPDX-License-Identifier: Apache-2.0
// The lifetime table of docs/dev/lifetimes.md, one test per row: every reference from one cuplan object to another is
// held (a share) or checked (a typed error), so destroying the referee first is safe. Each test destroys the referee
// first and then uses the referrer as a program would. Parameterised on where the memory lives: "cpu" runs on every
// machine (host streams without a GPU, CUDA streams with one), "cuda" uses device memory and skips without a GPU.
// Run under valgrind by scripts/valgrind.sh and under ASan/TSan with the library instrumented by
// scripts/sanitize_cpu.sh; the "cuda" cases under compute-sanitizer by scripts/sanitize_gpu.sh.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <complex>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using cf = std::complex<float>;

class Lifetime : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (std::string(GetParam()) == "cuda") CUPLAN_REQUIRE_GPU();
  }
  Device device() const { return std::string(GetParam()) == "cuda" ? Device::cuda(0) : Device::cpu(); }

  /// A tensor of `n` elements of `value` on this case's device, allocated and filled on `stream`.
  template <class T>
  Tensor filled(std::int64_t n, T value, StreamRef stream) const {
    std::vector<T> host(static_cast<std::size_t>(n), value);
    Tensor t = Tensor::empty({n}, dtype_of<T>, device(), stream);
    copy(TensorView(host.data(), {n}), t, stream);
    return t;
  }
  /// `t`'s 16 elements as a 4 x 4 Tensor sharing its memory.
  static Tensor square(const Tensor& t) {
    return Tensor::alias(t, TensorView(t.data(), t.dtype(), {4, 4}, Strides{4, 1}, t.device(), t.memory_space()));
  }
  template <class T>
  static std::vector<T> read(const Tensor& t, StreamRef stream) {
    const Tensor h = t.to(Device::cpu(), stream);
    return std::vector<T>(h.data<T>(), h.data<T>() + h.numel());
  }
};

// Row "tensor -> allocation stream": the Tensor holds a share of a cuplan-made allocation stream in every memory
// space, so allocation_stream() stays usable after the Stream object is gone.
TEST_P(Lifetime, TensorKeepsItsAllocationStream) {
  Tensor t;
  cudaStream_t handle = nullptr;
  {
    Stream s;
    handle = s.native();
    t = Tensor::empty({256}, f32, device(), s);
  }
  const StreamRef alloc = t.allocation_stream();
  EXPECT_EQ(alloc.native(), handle);
  EXPECT_TRUE(alloc.owning());
  // Still alive, so a new stream cannot take its handle (a freed host stream's handle, its owner's address, was
  // handed to the next Stream made, which then compared equal to the tensor's allocation stream).
  const Stream next;
  EXPECT_NE(next.native(), handle);
  {
    StreamScope scope(t.allocation_stream());  // took a share of the freed stream before the fix
    EXPECT_EQ(current_stream(alloc.device()), alloc);
  }
  t.record_stream(t.allocation_stream());
  std::vector<float> ones(256, 1.0F);
  copy(TensorView(ones.data(), {256}), t, t.allocation_stream());
  alloc.synchronize();
  EXPECT_EQ(read<float>(t, alloc)[255], 1.0F);
}

// The same for pinned host memory, which needs a GPU.
TEST(LifetimePinned, TensorKeepsItsAllocationStream) {
  CUPLAN_REQUIRE_GPU();
  Tensor t;
  cudaStream_t handle = nullptr;
  {
    Stream s;
    handle = s.native();
    t = Tensor::empty({256}, f32, Device::cpu(), s, HostMemory::pinned);
  }
  EXPECT_TRUE(t.allocation_stream().owning());
  const Stream next;
  EXPECT_NE(next.native(), handle) << "the allocation stream is alive: its handle cannot be reused";
  StreamScope scope(t.allocation_stream());
  t.record_stream(current_stream());
  t.allocation_stream().synchronize();
}

// Row "tensor -> streams that used it": each recorded stream is held until the memory is released, which waits for
// (host memory) or orders after (device memory) the work enqueued on it.
TEST_P(Lifetime, TensorKeepsTheStreamsThatUsedIt) {
  Stream home;
  Tensor t = filled<float>(1 << 16, 2.0F, home);
  home.synchronize();
  {
    Stream user;
    Tensor out = Tensor::empty({1 << 16}, f32, device(), user);
    copy(t, out, user);  // records `user` on both tensors
    t.record_stream(user);
  }
  // The user stream is gone; the release of t must still find it.
  t = Tensor();
  SUCCEED();
}

// Row "FFT -> streams, events and operands": an FFT holds its operand (a Tensor) and the stream of its last phase;
// events in `after` are waited for at the call and not kept.
TEST_P(Lifetime, FftKeepsItsOperandAndStreams) {
  std::optional<FFT> f;
  {
    Stream s;
    Tensor x = filled<cf>(64, cf(1.0F, 0.0F), s);
    Event e = s.record();
    f.emplace(x, FFTOptions{.stream = s});
    f->plan();
    (void)f->execute({.after = {e}});
  }  // x, s and e are gone
  Stream s2;
  Tensor y = f->execute({.stream = s2});
  EXPECT_EQ(read<cf>(y, s2)[0], cf(64.0F, 0.0F));
  Tensor x2 = filled<cf>(64, cf(2.0F, 0.0F), s2);
  f->reset_operand(x2, s2);  // orders s2 after the last phase's stream, which the FFT still holds
  EXPECT_EQ(read<cf>(f->execute({.stream = s2}), s2)[0], cf(128.0F, 0.0F));
}

// Row "Matmul -> streams, events and operands".
TEST_P(Lifetime, MatmulKeepsItsOperandsAndStreams) {
  std::optional<Matmul> m;
  {
    Stream s;
    Tensor a = filled<float>(16, 1.0F, s);
    Tensor b = filled<float>(16, 0.5F, s);
    Event e = s.record();
    m.emplace(square(a), square(b), MatmulOptions{.stream = s});
    m->plan();
    (void)m->execute({.after = {e}});
  }  // a, b, s and e are gone
  Stream s2;
  EXPECT_EQ(read<float>(m->execute({.stream = s2}), s2)[15], 2.0F);
}

// Row "DLPack capsule -> storage and stream": the capsule holds the storage, which holds the allocation stream.
TEST_P(Lifetime, DLPackCapsuleKeepsTheStorageAndItsStream) {
  dlpack::DLManagedTensor* capsule = nullptr;
  {
    Stream s;
    Tensor t = filled<float>(32, 3.0F, s);
    s.synchronize();
    capsule = t.to_dlpack();
  }
  Tensor back = Tensor::from_dlpack(capsule);  // the import takes the capsule over; its deleter runs once
  Stream s2;
  EXPECT_EQ(read<float>(back, s2)[31], 3.0F);
}

// Row "event -> stream": an Event refers to no stream after record(); it stays usable after that stream is gone.
TEST_P(Lifetime, EventOutlivesTheStreamItWasRecordedOn) {
  Event e;
  {
    Stream s;
    Tensor t = filled<float>(1024, 1.0F, s);
    e.record(s);
  }
  e.synchronize();
  EXPECT_TRUE(e.done());
  Stream s2;
  s2.wait(e);
  s2.synchronize();
}

// Row "plan cache -> streams": a cached plan holds the stream of its last call; the next call that finds it (a hit,
// another stream) orders after that stream, which the Stream object no longer holds.
TEST_P(Lifetime, CachedPlanKeepsTheStreamOfItsLastCall) {
  plan_cache::clear();
  {
    Stream s;
    Tensor x = filled<cf>(128, cf(1.0F, 0.0F), s);
    (void)fft(x, {.stream = s});
  }
  const PlanCacheStats before = plan_cache::stats();
  Stream s2;
  Tensor x = filled<cf>(128, cf(1.0F, 0.0F), s2);
  Tensor y = fft(x, {.stream = s2});
  EXPECT_EQ(plan_cache::stats().hits, before.hits + 1);
  EXPECT_EQ(read<cf>(y, s2)[0], cf(128.0F, 0.0F));
  plan_cache::clear();
}

INSTANTIATE_TEST_SUITE_P(Spaces, Lifetime, ::testing::Values("cpu", "cuda"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// Row "scope -> stream": a scope holds a share of its stream; the Stream object may go first.
TEST(LifetimeScope, ScopeKeepsItsStream) {
  std::unique_ptr<StreamScope> scope;
  cudaStream_t handle = nullptr;
  {
    Stream s;
    handle = s.native();
    scope = std::make_unique<StreamScope>(s);
  }
  EXPECT_EQ(current_stream().native(), handle);
  EXPECT_TRUE(current_stream().owning());
  current_stream().synchronize();
  scope.reset();
  EXPECT_NE(current_stream().native(), handle);
}

// Row "scope -> stream", ended out of order: the current stream is the innermost scope still open, never a stream
// that no scope or Stream holds any more.
TEST(LifetimeScope, ScopesEndingOutOfOrderLeaveTheInnermostOpenOne) {
  const StreamRef before = current_stream();
  auto inner_stream = std::make_unique<Stream>();
  Stream outer_stream;
  auto outer = std::make_unique<StreamScope>(outer_stream);
  auto inner = std::make_unique<StreamScope>(*inner_stream);
  const cudaStream_t inner_handle = inner_stream->native();
  EXPECT_EQ(current_stream().native(), inner_handle);
  outer.reset();  // the outer scope ends first: the inner one is still open
  EXPECT_EQ(current_stream().native(), inner_handle);
  inner.reset();
  EXPECT_EQ(current_stream(), before);  // was the outer stream: what the inner scope had saved
  inner_stream.reset();
  EXPECT_EQ(current_stream(), before);

  // Three scopes, the middle one ends first: the innermost stays current, then the outermost.
  Stream a, b, c;
  auto sa = std::make_unique<StreamScope>(a);
  auto sb = std::make_unique<StreamScope>(b);
  auto sc = std::make_unique<StreamScope>(c);
  sb.reset();
  EXPECT_EQ(current_stream(), c.ref());
  sc.reset();
  EXPECT_EQ(current_stream(), a.ref());
  sa.reset();
  EXPECT_EQ(current_stream(), before);
}

// Row "scope -> stream", ended on another thread: the scope's own thread drops it; the other thread is untouched.
TEST(LifetimeScope, ScopeEndedOnAnotherThreadLeavesBothThreadsConsistent) {
  const StreamRef before = current_stream();
  auto s = std::make_unique<Stream>();
  const cudaStream_t handle = s->native();
  auto scope = std::make_unique<StreamScope>(*s);
  s.reset();  // the scope holds the stream now
  StreamRef seen_there;
  std::thread other([&] {
    seen_there = current_stream();
    scope.reset();  // ends a scope of the main thread
  });
  other.join();
  EXPECT_NE(seen_there.native(), handle);  // scopes are per thread
  EXPECT_EQ(current_stream(), before);
}

// Row "current stream (Stream::use) -> stream": held while current.
TEST(LifetimeScope, UsedStreamOutlivesItsStreamObject) {
  cudaStream_t handle = nullptr;
  {
    Stream s;
    handle = s.native();
    s.use();
  }
  EXPECT_EQ(current_stream().native(), handle);
  current_stream().synchronize();
  Stream::legacy_default().use();
  EXPECT_NE(current_stream().native(), handle);
}

// Row "tensor -> memory resource" (device memory, GPU only). A resource that counts its calls and says when it is
// destroyed; allocate() can be told to return null or throw, deallocate() to throw.
struct Calls {
  std::atomic<int> allocations{0}, deallocations{0};
  std::atomic<bool> destroyed{false};
  bool allocate_null = false, allocate_throws = false, deallocate_throws = false;
};

class CountingResource final : public MemoryResource {
 public:
  explicit CountingResource(std::shared_ptr<Calls> calls) : calls_(std::move(calls)) {}
  ~CountingResource() override { calls_->destroyed = true; }
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    if (calls_->allocate_throws) throw std::runtime_error("CountingResource: no memory today");
    if (calls_->allocate_null) return nullptr;
    void* ptr = nullptr;
    if (cudaMallocAsync(&ptr, bytes, stream) != cudaSuccess) return nullptr;
    ++calls_->allocations;
    return ptr;
  }
  void deallocate(void* ptr, std::size_t, cudaStream_t stream) override {
    ++calls_->deallocations;
    (void)cudaFreeAsync(ptr, stream);
    if (calls_->deallocate_throws) throw std::runtime_error("CountingResource: deallocate failed");
  }

 private:
  std::shared_ptr<Calls> calls_;
};

// Puts the default resource back however the test ends.
struct DefaultResourceAtExit {
  ~DefaultResourceAtExit() { memory::set_resource(Device::cuda(0), nullptr); }
};

// Makes a CountingResource with `misbehaviour` set the resource of device 0; the record of its calls.
std::shared_ptr<Calls> install_counting_resource(bool Calls::*misbehaviour) {
  auto calls = std::make_shared<Calls>();
  (*calls).*misbehaviour = true;
  memory::set_resource(Device::cuda(0), std::make_shared<CountingResource>(calls));
  return calls;
}

TEST(LifetimeResource, TensorKeepsTheResourceThatAllocatedItWhenReplacedAndDropped) {
  CUPLAN_REQUIRE_GPU();
  DefaultResourceAtExit restore;
  auto calls = std::make_shared<Calls>();
  auto resource = std::make_shared<CountingResource>(calls);
  memory::set_resource(Device::cuda(0), resource);
  Stream s;
  Tensor t = Tensor::empty({1 << 20}, c64, Device::cuda(0), s);
  EXPECT_EQ(calls->allocations, 1);
  memory::set_resource(Device::cuda(0), nullptr);  // replaced: later allocations go to the default pool
  resource.reset();                                // and the program drops its own share
  EXPECT_FALSE(calls->destroyed) << "the tensor's memory still belongs to the resource";
  Tensor u = Tensor::empty({1 << 20}, c64, Device::cuda(0), s);
  EXPECT_EQ(calls->allocations, 1);
  std::vector<cf> ones(1 << 20, cf(1.0F, 0.0F));
  copy(TensorView(ones.data(), {1 << 20}), t, s);
  Tensor y = fft(t, {.stream = s});
  t = Tensor();
  y = Tensor();
  plan_cache::clear();  // whatever a cached plan still refers to goes too
  s.synchronize();
  EXPECT_EQ(calls->deallocations, 1);
  EXPECT_TRUE(calls->destroyed) << "the last allocation gave its share back";
}

TEST(LifetimeResource, NullFromTheResourceIsOutOfMemoryAndLeavesNothing) {
  CUPLAN_REQUIRE_GPU();
  DefaultResourceAtExit restore;
  const auto calls = install_counting_resource(&Calls::allocate_null);
  const std::size_t in_use = memory::stats(Device::cuda(0)).bytes_in_use;
  EXPECT_THROW((void)Tensor::empty({4096}, f32, Device::cuda(0)), OutOfMemory);
  EXPECT_EQ(memory::stats(Device::cuda(0)).bytes_in_use, in_use);
  memory::set_resource(Device::cuda(0), nullptr);
  EXPECT_FALSE(calls->destroyed.load() && calls->deallocations > 0) << "nothing was allocated, nothing given back";
  EXPECT_EQ(calls->deallocations, 0);
}

TEST(LifetimeResource, ThrowingAllocateReachesTheCallerAndLeavesNothing) {
  CUPLAN_REQUIRE_GPU();
  DefaultResourceAtExit restore;
  const auto calls = install_counting_resource(&Calls::allocate_throws);
  const std::size_t in_use = memory::stats(Device::cuda(0)).bytes_in_use;
  EXPECT_THROW((void)Tensor::empty({4096}, f32, Device::cuda(0)), std::runtime_error);
  std::vector<cf> host(256, cf(1.0F, 0.0F));
  // A host operand with CUDA execution stages through device memory from the resource: the call fails as a whole.
  EXPECT_ANY_THROW((void)fft(TensorView(host.data(), {256}), {.execution = Execution::cuda()}));
  EXPECT_EQ(memory::stats(Device::cuda(0)).bytes_in_use, in_use);
  memory::set_resource(Device::cuda(0), nullptr);
  EXPECT_EQ(calls->deallocations, 0);
  // With the default resource back, the same call works.
  EXPECT_EQ(fft(TensorView(host.data(), {256}), {.execution = Execution::cuda()}).data<cf>()[0], cf(256.0F, 0.0F));
}

TEST(LifetimeResource, ThrowingDeallocateIsLoggedAndDropped) {
  CUPLAN_REQUIRE_GPU();
  DefaultResourceAtExit restore;
  const auto calls = install_counting_resource(&Calls::deallocate_throws);
  std::vector<std::string> warnings;
  set_logger([&](LogLevel level, std::string_view message) {
    if (level == LogLevel::warning) warnings.emplace_back(message);
  });
  { Tensor t = Tensor::empty({4096}, f32, Device::cuda(0)); }  // the destructor calls deallocate, which throws
  set_logger({});
  EXPECT_EQ(calls->deallocations, 1);
  EXPECT_FALSE(warnings.empty()) << "the dropped exception is logged";
  memory::set_resource(Device::cuda(0), nullptr);
  EXPECT_TRUE(calls->destroyed);
}

}  // namespace
}  // namespace cuplan
