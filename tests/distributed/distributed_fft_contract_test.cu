// SPDX-License-Identifier: Apache-2.0
// DistributedFFT's contract beyond the numbers: device operands on the caller's stream behind a busy kernel, phases
// on different streams, round trips through the transposed layout, release_workspace, typed errors, and ranks as
// forked processes that share the NCCL unique id through a file.

#include <chrono>
#include <complex>
#include <cstdlib>
#include <vector>

#include "distributed_test_util.cuh"

namespace {

using cuplan::Direction;
using cuplan::InvalidArgument;
using cuplan::StateError;

int all_gpus() {
  return std::min(cuplan::cuda_device_count(), 8);
}

// A case, its float64 reference and the complex result that the ranks gather into the global shape, each its own box.
struct GatheredCase {
  explicit GatheredCase(const Case& the_case) : c(the_case), ref(make_reference(c)), got(ref.out_c.size()) {}

  // Brings this rank's result to the host on `stream` and copies it into its box of the global `shape`.
  void gather(const cuplan::DistributedBox& box, const std::vector<std::int64_t>& shape, const cuplan::Tensor& result,
              cuplan::StreamRef stream) {
    const auto host = result.to(cuplan::Device::cpu(), stream);
    std::lock_guard lock(m);
    box_copy<cplx, cplx>(box, shape, nullptr, host.data<cplx>(), false, got.data());
  }

  const Case c;
  const Reference ref;
  std::vector<cplx> got;
  std::mutex m;
};

// Forward optimized (C2C or R2C), then the inverse object with transposed input, scaled by 1/N: back to x on every
// rank without a gather. `release` drops the buffers after each execute, so every call reallocates them.
template <class R>
void round_trip(Communicator& comm, FFTType forward_type, const std::vector<std::int64_t>& shape, bool release,
                cuplan::ExchangeMethod exchange = cuplan::ExchangeMethod::automatic) {
  using C = std::complex<R>;
  const bool real = forward_type == FFTType::r2c;
  const cuplan::Shape g{std::span<const std::int64_t>(shape)};
  const cuplan::Stream stream(comm.device());
  cuplan::DistributedFFTOptions fo;
  fo.fft_type = forward_type;
  fo.result_layout = cuplan::ResultLayout::optimized;
  fo.stream = stream.ref();
  fo.exchange = exchange;
  const cuplan::DType in_dtype = real ? cuplan::dtype_of<R> : cuplan::dtype_of<C>;
  const auto boxes = DistributedFFT::boxes(comm, g, in_dtype, fo);
  const std::size_t n = static_cast<std::size_t>(boxes.input.numel());
  const auto host_x = cuplan::Tensor::empty(boxes.input.shape(), in_dtype);
  if (real) {
    auto v = cuplan::testing::random_vector<R>(n);
    std::copy(v.begin(), v.end(), host_x.data<R>());
  } else {
    auto v = cuplan::testing::random_vector<C>(n);
    std::copy(v.begin(), v.end(), host_x.data<C>());
  }
  const auto x = host_x.to(comm.device(), stream.ref());
  DistributedFFT forward(comm, g, x, fo);
  forward.plan();
  cuplan::DistributedFFTOptions io;
  io.fft_type = real ? FFTType::c2r : FFTType::c2c;
  io.input_layout = cuplan::InputLayout::transposed;
  io.normalization = cuplan::Normalization::inverse;
  io.stream = stream.ref();
  io.exchange = exchange;
  for (int pass = 0; pass < 2; ++pass) {
    const auto spectrum = forward.execute({.release_workspace = release});
    EXPECT_EQ(forward.output_box().extent, std::vector<std::int64_t>(spectrum.shape().begin(), spectrum.shape().end()));
    DistributedFFT inverse(comm, g, spectrum, io);
    EXPECT_EQ(inverse.output_box(), boxes.input);
    inverse.plan();
    const auto back = inverse
                          .execute({.direction = real ? std::optional<Direction>{} : Direction::inverse,
                                    .release_workspace = release})
                          .to(cuplan::Device::cpu(), stream.ref());
    double err = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const C got = real ? C(back.data<R>()[i]) : back.data<C>()[i];
      const C want = real ? C(host_x.data<R>()[i]) : host_x.data<C>()[i];
      err += std::norm(got - want);
      den += std::norm(want);
    }
    EXPECT_LT(std::sqrt(err / den), sizeof(R) == 8 ? 1e-12 : 2e-6) << "pass " << pass;
  }
}

}  // namespace

TEST(DistributedFFTStreams, DeviceOperandsOnTheCallersStreamBehindABusyKernelDoNotBlock) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(all_gpus());
  GatheredCase gathered({FFTType::c2c, Decomposition::automatic, {}, {16, 12, 10}, {}, Direction::forward, true});
  on_ranks(comms, [&](int, Communicator& comm) {
    const cuplan::Stream stream(comm.device());
    cuplan::DistributedFFTOptions o;
    o.stream = stream.ref();
    const cuplan::Shape g{std::span<const std::int64_t>(gathered.c.shape)};
    const auto boxes = DistributedFFT::boxes(comm, g, cuplan::c128, o);
    auto staged =
        cuplan::Tensor::empty(boxes.input.shape(), cuplan::c128, cuplan::Device::cpu(), {}, cuplan::HostMemory::pinned);
    box_copy(boxes.input, gathered.c.shape, gathered.ref.in_c.data(), staged.data<cplx>(), true);
    auto operand = cuplan::Tensor::empty(boxes.input.shape(), cuplan::c128, comm.device(), stream.ref());
    CUPLAN_TEST_CUDA(cudaMemsetAsync(operand.data(), 0xFF, boxes.input.numel() * 16, stream));
    DistributedFFT plan(comm, g, operand, o);
    plan.plan();
    CUPLAN_TEST_CUDA(cudaStreamSynchronize(stream));
    // The producer of the operand runs after a busy kernel on the same stream; execute must not wait for it.
    cuplan::testing::spin_kernel<<<1, 1, 0, stream>>>(cuplan::testing::cycles_for_ms(300.0, comm.device().index()));
    CUPLAN_TEST_CUDA(cudaGetLastError());
    CUPLAN_TEST_CUDA(
        cudaMemcpyAsync(operand.data(), staged.data(), boxes.input.numel() * 16, cudaMemcpyHostToDevice, stream));
    const auto t0 = std::chrono::steady_clock::now();
    const auto result = plan.execute({.stream = stream.ref()});
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_FALSE(stream.done()) << "execute returned after the busy kernel finished (" << ms << " ms): it blocked";
    gathered.gather(plan.output_box(), gathered.c.shape, result, stream.ref());
  });
  EXPECT_LT(rel_error(gathered.got, gathered.ref.out_c), 1e-12);
}

// A Tensor given as `out` is a cuplan Tensor like any operation's (docs/streams.md, "cuplan Tensors across streams").
// Round 1: its last write, a copy on s1 behind a long kernel, is still pending when the execute on s2 is called; the
// execute must wait for it, or the copy lands over the result. Round 2: the execute, behind a long kernel on s2, is
// out's producer; a read given no stream must wait for it rather than for s1, whose copy is long done.
TEST(DistributedFFTStreams, ATensorGivenAsOutIsOrderedAfterItsProducerAndTheCallBecomesIt) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(1);
  GatheredCase gathered({FFTType::c2c, Decomposition::automatic, {}, {16, 12, 10}, {}, Direction::forward, true});
  on_ranks(comms, [&](int, Communicator& comm) {
    const cuplan::Stream s1(comm.device()), s2(comm.device());
    cuplan::DistributedFFTOptions o;
    o.stream = s2.ref();
    const cuplan::Shape g{std::span<const std::int64_t>(gathered.c.shape)};
    const auto boxes = DistributedFFT::boxes(comm, g, cuplan::c128, o);
    auto staged = cuplan::Tensor::empty(boxes.input.shape(), cuplan::c128);
    box_copy(boxes.input, gathered.c.shape, gathered.ref.in_c.data(), staged.data<cplx>(), true);
    const auto operand = staged.to(comm.device(), s2.ref());
    DistributedFFT plan(comm, g, operand, o);
    plan.plan();
    const cuplan::Shape out_shape = plan.output_box().shape();
    const auto out = cuplan::Tensor::empty(out_shape, cuplan::c128, comm.device(), s1.ref());
    const auto poison = cuplan::Tensor::empty(out_shape, cuplan::c128, comm.device(), s1.ref());
    CUPLAN_TEST_CUDA(cudaMemsetAsync(poison.data(), 0x7F, static_cast<std::size_t>(poison.numel()) * 16, s1));
    CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
    const auto check = [&](const cuplan::Tensor& host, const char* round) {
      std::fill(gathered.got.begin(), gathered.got.end(), cplx(0));
      box_copy<cplx, cplx>(plan.output_box(), gathered.c.shape, nullptr, host.data<cplx>(), false, gathered.got.data());
      EXPECT_LT(rel_error(gathered.got, gathered.ref.out_c), 1e-12) << round;
    };

    {
      // s1 held by a kernel that waits for the host (not a timed spin, which a host slowed by compute-sanitizer can
      // outlast).
      cuplan::testing::HostGate gate;
      gate.hold(s1.native());
      cuplan::copy(poison, out, s1.ref());  // out's pending producer: s1, behind the kernel
      const auto result = plan.execute({.stream = s2.ref(), .out = out});
      EXPECT_EQ(result.data(), out.data());
      EXPECT_FALSE(s1.done()) << "the kernel on s1 ended before the check: nothing was left to order";
      gate.open();
      EXPECT_FALSE(gate.timed_out());
    }
    CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
    auto host = cuplan::Tensor::empty(out_shape, cuplan::c128);
    CUPLAN_TEST_CUDA(
        cudaMemcpy(host.data(), out.data(), static_cast<std::size_t>(out.numel()) * 16, cudaMemcpyDeviceToHost));
    check(host, "round 1: the execute on s2 did not wait for out's pending write on s1");

    cuplan::copy(poison, out, s1.ref());
    s1.synchronize();
    {
      cuplan::testing::HostGate gate;
      gate.hold(s2.native());
      (void)plan.execute({.stream = s2.ref(), .out = out});
      EXPECT_FALSE(s2.done()) << "the kernel on s2 ended before the read: nothing was left to order";
      gate.open_after(std::chrono::milliseconds(100));  // the read below is issued while s2 is still held
      check(out.to(cuplan::Device::cpu()), "round 2: a read given no stream did not wait for the execute on s2");
      EXPECT_FALSE(gate.timed_out());
    }

    try {
      (void)plan.execute({.stream = s2.ref(), .out = cuplan::Tensor()});
      ADD_FAILURE() << "an undefined out was accepted";
    } catch (const StateError& e) {
      EXPECT_NE(std::string(e.what()).find("DistributedFFT::execute: out: expected a defined Tensor"),
                std::string::npos)
          << e.what();
    }
    s2.synchronize();
  });
}

TEST(DistributedFFTStreams, PlanAndExecuteOnDifferentStreamsWithAfterEvents) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(all_gpus());
  GatheredCase gathered({FFTType::r2c, Decomposition::automatic, {}, {10, 9, 8}, {}, Direction::forward, true});
  on_ranks(comms, [&](int, Communicator& comm) {
    const cuplan::Stream s1(comm.device()), s2(comm.device());
    const cuplan::Shape g{std::span<const std::int64_t>(gathered.c.shape)};
    const auto boxes = DistributedFFT::boxes(comm, g, cuplan::f64, {});
    auto operand = cuplan::Tensor::empty(boxes.input.shape(), cuplan::f64, comm.device(), s1.ref());
    std::vector<double> local(static_cast<std::size_t>(boxes.input.numel()));
    box_copy(boxes.input, gathered.c.shape, gathered.ref.in_r.data(), local.data(), true);
    cuplan::testing::spin_kernel<<<1, 1, 0, s1>>>(cuplan::testing::cycles_for_ms(50.0, comm.device().index()));
    cuplan::copy(cuplan::TensorView(local.data(), boxes.input.shape()), operand, s1.ref());
    cuplan::Event ready(comm.device(), false);
    ready.record(s1.ref());
    DistributedFFT plan(comm, g, operand, {.stream = s1.ref()});
    plan.plan(s1.ref());
    const auto result = plan.execute({.stream = s2.ref(), .after = {ready}});
    gathered.gather(plan.output_box(), gathered.ref.out_shape, result, s2.ref());
  });
  EXPECT_LT(rel_error(gathered.got, gathered.ref.out_c), 1e-12);
}

TEST(DistributedFFTRoundTrip, OptimizedForwardThenTransposedInverseGivesTheInput) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(all_gpus());
  on_ranks(comms, [&](int, Communicator& comm) {
    for (auto method : {cuplan::ExchangeMethod::automatic, cuplan::ExchangeMethod::nccl}) {
      round_trip<double>(comm, FFTType::c2c, {9, 8, 7}, false, method);
      round_trip<float>(comm, FFTType::r2c, {8, 9, 11}, false, method);
      // release_workspace: buffers come back each call (the copy engines' receive buffer stays)
      round_trip<double>(comm, FFTType::r2c, {12, 20}, true, method);
    }
  });
}

TEST(DistributedFFTErrors, TypedErrorsNamingTheProblem) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(1);
  Communicator& comm = comms[0];
  auto x = cuplan::Tensor::empty({8, 8, 8}, cuplan::c64, comm.device());
  const cuplan::Shape g{8, 8, 8};
  auto throws_with = [](auto&& call, const std::string& text, auto type_tag) {
    using E = decltype(type_tag);
    try {
      call();
      ADD_FAILURE() << "no exception; expected one naming '" << text << "'";
    } catch (const E& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  // A bad decomposition; a grid for another rank count (the communicator of the wrong size).
  auto x2 = cuplan::Tensor::empty({8, 8}, cuplan::c64, comm.device());
  throws_with(
      [&] {
        (void)DistributedFFT(comm, {8, 8}, x2, {.decomposition = Decomposition::pencil});
      },
      "pencil needs a 3D", InvalidArgument(""));
  throws_with(
      [&] {
        (void)DistributedFFT(comm, g, x, {.process_grid = std::array<int, 2>{2, 2}});
      },
      "but the communicator has 1", InvalidArgument(""));
  // Operands that are not the rank's input box, of the wrong dtype or on the host.
  auto small = cuplan::Tensor::empty({8, 8, 4}, cuplan::c64, comm.device());
  throws_with([&] { (void)DistributedFFT(comm, g, small, {}); },
              "local_operand: expected a contiguous c64 array of shape 8x8x8 (rank 0's input box", InvalidArgument(""));
  throws_with([&] { (void)DistributedFFT(comm, g, x, {.fft_type = FFTType::r2c}); }, "got dtype c64",
              InvalidArgument(""));
  auto host = cuplan::Tensor::empty({8, 8, 8}, cuplan::c64);
  throws_with([&] { (void)DistributedFFT(comm, g, host, {}); }, "its memory is host_pageable on cpu",
              InvalidArgument(""));
  throws_with([&] { (void)DistributedFFT(comm, {8, 8, 8, 8}, x, {}); }, "2 or 3 dimensions", InvalidArgument(""));
  // Callbacks are refused, naming the role (docs/distributed.md, "Callbacks").
  throws_with([&] { (void)DistributedFFT(comm, g, x, {.epilog = cuplan::FFTCallback::cuda_source("x", "f")}); },
              "epilog: DistributedFFT does not support prolog or epilog callbacks", cuplan::CallbackError("", "", ""));
  throws_with(
      [&] {
        (void)DistributedFFT(comm, g, x, {.fft_type = FFTType::c2r, .result_layout = cuplan::ResultLayout::optimized});
      },
      "result_layout", InvalidArgument(""));
  auto real = cuplan::Tensor::empty({8, 8, 8}, cuplan::f32, comm.device());
  CUPLAN_TEST_CUDA(cudaMemset(real.data(), 0, 8 * 8 * 8 * sizeof(float)));  // the executes below read it
  throws_with([&] { (void)DistributedFFT(comm, g, real, {.input_layout = cuplan::InputLayout::transposed}); },
              "input_layout", InvalidArgument(""));
  // An execute before plan() (it never plans: planning is collective), a contradicting direction, a wrong `out`,
  // use after release_operand and after free().
  DistributedFFT r2c(comm, g, real, {});
  throws_with([&] { r2c.execute(); }, "expected a planned object, got one without a plan", StateError(""));
  r2c.plan();
  throws_with([&] { r2c.execute({.direction = Direction::inverse}); }, "always forward", InvalidArgument(""));
  float factor = 1.0f;
  throws_with([&] { r2c.execute({.prolog_data = &factor}); }, "prolog_data: the object has no prolog", StateError(""));
  throws_with([&] { r2c.execute({.out = x.view()}); },
              "DistributedFFT::execute: out: expected a writable contiguous c64 array of shape 8x8x5",
              InvalidArgument(""));
  auto out = cuplan::Tensor::empty({8, 8, 5}, cuplan::c64, comm.device());
  throws_with([&] { r2c.execute({.out = out.view().as_read_only()}); }, "it is read-only", InvalidArgument(""));
  r2c.release_operand();
  throws_with([&] { r2c.execute(); }, "no operand", StateError(""));
  r2c.reset_operand(real);
  EXPECT_NO_THROW(r2c.execute());
  r2c.free();
  throws_with([&] { r2c.execute(); }, "freed", StateError(""));
  throws_with([&] { r2c.plan(); }, "freed", StateError(""));
  throws_with([&] { (void)r2c.input_box(); }, "freed", StateError(""));
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
}

// Ranks that plan different transforms would post different exchanges and hang; plan() compares them first and
// every rank raises the same InvalidArgument naming the rank and the field.
TEST(DistributedFFTErrors, RanksThatDisagreeRaiseOnEveryRankInPlan) {
  CUPLAN_REQUIRE_GPUS(2);
  auto comms = local_comms(2);
  struct Mismatch {
    const char* field;
    std::vector<std::int64_t> shape1;
    cuplan::Normalization norm1;
    cuplan::ExchangeMethod exchange1;
  };
  const Mismatch cases[] = {
      {"global_shape[2]", {16, 12, 6}, cuplan::Normalization::none, cuplan::ExchangeMethod::automatic},
      {"normalization", {16, 12, 10}, cuplan::Normalization::ortho, cuplan::ExchangeMethod::automatic},
      {"exchange", {16, 12, 10}, cuplan::Normalization::none, cuplan::ExchangeMethod::nccl},
  };
  for (const Mismatch& m : cases) {
    SCOPED_TRACE(m.field);
    std::vector<std::string> messages(2);
    on_ranks(comms, [&](int rank, Communicator& comm) {
      const std::vector<std::int64_t> shape = rank == 0 ? std::vector<std::int64_t>{16, 12, 10} : m.shape1;
      const cuplan::Shape g{std::span<const std::int64_t>(shape)};
      cuplan::DistributedFFTOptions o;
      o.decomposition = Decomposition::slab;
      o.normalization = rank == 0 ? cuplan::Normalization::none : m.norm1;
      o.exchange = rank == 0 ? cuplan::ExchangeMethod::automatic : m.exchange1;
      const auto boxes = DistributedFFT::boxes(comm, g, cuplan::c64, o);
      const auto x = cuplan::Tensor::empty(boxes.input.shape(), cuplan::c64, comm.device());
      DistributedFFT plan(comm, g, x, o);
      try {
        plan.plan();
      } catch (const InvalidArgument& e) {
        messages[static_cast<std::size_t>(rank)] = e.what();
      }
      // The object stays usable for what needs no peer: its boxes and description.
      EXPECT_EQ(plan.input_box(), boxes.input);
    });
    for (const std::string& msg : messages) {
      EXPECT_NE(msg.find("rank 1 has " + std::string(m.field)), std::string::npos) << msg;
      EXPECT_NE(msg.find("DistributedFFT::plan"), std::string::npos) << msg;
    }
  }
}

TEST(DistributedFFTExchange, AutomaticPicksCopyEnginesBetweenPeerGpusAndSaysSo) {
  CUPLAN_REQUIRE_GPUS(2);
  auto comms = local_comms(2);
  on_ranks(comms, [&](int, Communicator& comm) {
    const cuplan::Shape g{32, 24, 16};
    cuplan::DistributedFFTOptions o{.decomposition = Decomposition::slab};
    const auto boxes = DistributedFFT::boxes(comm, g, cuplan::c64, o);
    const auto x = cuplan::Tensor::empty(boxes.input.shape(), cuplan::c64, comm.device());
    DistributedFFT plan(comm, g, x, o);
    EXPECT_EQ(plan.exchange_method(), cuplan::ExchangeMethod::automatic);
    EXPECT_EQ(plan.device_memory_bytes(), 0u);
    plan.plan();
    int can = 0;
    CUPLAN_TEST_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1));
    EXPECT_EQ(plan.exchange_method(), can ? cuplan::ExchangeMethod::copy_engine : cuplan::ExchangeMethod::nccl);
    EXPECT_GT(plan.device_memory_bytes(), 0u);
    EXPECT_NE(plan.describe().find(can ? "exchange by copy engine" : "exchange by NCCL"), std::string::npos)
        << plan.describe();
  });
}

TEST(DistributedFFTErrors, BadExchangeOptionsRaiseInTheConstructor) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(1);
  const auto x = cuplan::Tensor::empty({8, 8, 8}, cuplan::c64, comms[0].device());
  // Written before the in-place executes below read it (initcheck reports a read of memory nothing wrote).
  std::vector<std::complex<float>> zeros(8 * 8 * 8);
  cuplan::copy(cuplan::TensorView(zeros.data(), {8, 8, 8}), x);
  EXPECT_THROW(DistributedFFT(comms[0], {8, 8, 8}, x, {.chunks = -1}), InvalidArgument);
  EXPECT_THROW(DistributedFFT(comms[0], {8, 8, 8}, x, {.fields = 0}), InvalidArgument);
  // In place: C2C only, writable operands, and no `out` at execute.
  const auto real = cuplan::Tensor::empty({8, 8, 8}, cuplan::f32, comms[0].device());
  EXPECT_THROW(DistributedFFT(comms[0], {8, 8, 8}, real, {.inplace = true}), InvalidArgument);
  EXPECT_THROW(DistributedFFT(comms[0], {8, 8, 8}, x.view().as_read_only(), {.inplace = true}), InvalidArgument);
  {
    DistributedFFT in_place(comms[0], {8, 8, 8}, x, {.inplace = true});
    in_place.plan();
    auto other = cuplan::Tensor::empty({8, 8, 8}, cuplan::c64, comms[0].device());
    EXPECT_THROW((void)in_place.execute({.out = other.view()}), InvalidArgument);
    // A direction out of range is refused by number before anything is enqueued; the object runs on.
    EXPECT_THROW((void)in_place.execute({.direction = static_cast<cuplan::Direction>(5)}), InvalidArgument);
    EXPECT_NO_THROW((void)in_place.execute({.direction = cuplan::Direction::inverse}));
    EXPECT_NE(in_place.describe().find("in place"), std::string::npos) << in_place.describe();
  }
  // Three fields need a leading axis of 3: the message names the shape expected and the field count.
  try {
    DistributedFFT plan(comms[0], {8, 8, 8}, x, {.fields = 3});
    FAIL() << "an operand without the field axis was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("3x8x8x8"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("after 3 fields"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DistributedFFT(comms[0], {8, 8, 8}, x, {.exchange = static_cast<cuplan::ExchangeMethod>(7)}),
               InvalidArgument);
}

// In place needs every rank's output box to fit in its input box; when one does not, every rank raises in the
// constructor (none goes on to plan alone).
TEST(DistributedFFTErrors, InPlaceWithoutRoomRaisesOnEveryRank) {
  CUPLAN_REQUIRE_GPUS(2);
  auto comms = local_comms(2);
  // 9 rows over 2 ranks: rank 1 holds 4x8x7 = 224 elements and would receive 9x4x7 = 252.
  const cuplan::Shape g{9, 8, 7};
  const cuplan::DistributedFFTOptions o{
      .decomposition = Decomposition::slab, .result_layout = cuplan::ResultLayout::optimized, .inplace = true};
  on_ranks(comms, [&](int, Communicator& comm) {
    const auto boxes = DistributedFFT::boxes(comm, g, cuplan::c64, o);
    const auto x = cuplan::Tensor::empty(boxes.input.shape(), cuplan::c64, comm.device());
    try {
      DistributedFFT plan(comm, g, x, o);
      ADD_FAILURE() << "an in-place transform without room was constructed";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("rank 1's output box (252 elements)"), std::string::npos) << e.what();
    }
  });
}

// The plan holds a copy of its Communicator: the program's own copies may go first (docs/lifetimes.md).
TEST(DistributedFFTLifetime, PlanOutlivesTheProgramsCommunicators) {
  CUPLAN_REQUIRE_GPUS(1);
  std::optional<DistributedFFT> plan;
  const cuplan::Shape g{8, 6, 4};
  auto x = cuplan::testing::random_vector<std::complex<double>>(8 * 6 * 4);
  cuplan::Tensor operand;
  {
    auto comms = local_comms(1);
    operand = cuplan::Tensor::wrap(cuplan::TensorView(x.data(), g)).to(comms[0].device());
    plan.emplace(comms[0], g, operand);
  }  // every Communicator the program made is gone; the owning NCCL communicator lives on in the plan
  plan->plan();
  const auto y = plan->execute().to(cuplan::Device::cpu());
  const auto want = cuplan::fft(operand).to(cuplan::Device::cpu());
  double err = 0, den = 0;
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    err += std::norm(y.data<std::complex<double>>()[i] - want.data<std::complex<double>>()[i]);
    den += std::norm(want.data<std::complex<double>>()[i]);
  }
  EXPECT_LT(std::sqrt(err / den), 1e-12);
  plan->free();
  EXPECT_THROW(plan->execute(), StateError);
}

TEST(DistributedFFTErrors, ShapeTooSmallForTheRankCount) {
  CUPLAN_REQUIRE_GPUS(2);
  auto comms = local_comms(2);
  // Axis 0 has one element for two slabs: a rank would own nothing.
  EXPECT_THROW(DistributedFFT::boxes(comms[0], {1, 8, 8}, cuplan::c64, {.decomposition = Decomposition::slab}),
               InvalidArgument);
}

// Ranks as processes (tests/distributed/rank_harness.hpp): each child re-runs this executable with only
// DistributedFFTChild.Rank selected, so it starts CUDA and NCCL fresh. Rank 0 writes the unique id to a file; the
// others wait for it.
TEST(DistributedFFTChild, Rank) {
  const std::optional<Communicator> child = cuplan::testing::child_communicator();
  if (!child) GTEST_SKIP() << "runs only as a child of DistributedFFTProcesses (CUPLAN_DIST_RANK unset)";
  Communicator comm = *child;
  const int rank = std::atoi(std::getenv("CUPLAN_DIST_RANK"));
  const int size = std::atoi(std::getenv("CUPLAN_DIST_SIZE"));
  ASSERT_EQ(comm.size(), size);
  ASSERT_EQ(comm.rank(), rank);
  round_trip<double>(comm, FFTType::c2c, {9, 8, 7}, false);
  round_trip<float>(comm, FFTType::r2c, {10, 9, 8}, false);
  // Processes of one host: copy engines through CUDA IPC handles, and NCCL, at a size where chunks carry MiBs.
  for (auto method : {cuplan::ExchangeMethod::copy_engine, cuplan::ExchangeMethod::nccl}) {
    SCOPED_TRACE(std::string(cuplan::to_string(method)));
    round_trip<float>(comm, FFTType::c2c, {256, 256, 256}, false, method);
    round_trip<double>(comm, FFTType::r2c, {96, 80, 64}, true, method);
  }
}

TEST(DistributedFFTProcesses, RanksAsProcessesShareTheUniqueIdThroughAFile) {
  CUPLAN_REQUIRE_GPUS(2);
  cuplan::testing::run_as_processes("DistributedFFTChild.Rank", all_gpus());
}
