// SPDX-License-Identifier: Apache-2.0
// Moved-from objects of every public movable type: using one is a StateError naming the type and what was done,
// never a silent default (a moved-from Stream standing for the legacy default stream, a moved-from Tensor still
// viewing memory it no longer owns). CPU operands; the same calls run on a GPU machine with CUDA streams.

#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"

namespace cuplan {
namespace {

using cf = std::complex<float>;

// Runs `call`, which must throw StateError with every fragment in its message.
void expect_state_error(const std::function<void()>& call, const std::vector<std::string>& fragments) {
  try {
    call();
    ADD_FAILURE() << "expected StateError, nothing was thrown";
  } catch (const StateError& e) {
    const std::string what = e.what();
    for (const std::string& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "'" << f << "' in: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected StateError, got: " << e.what();
  }
}

// NOLINTBEGIN(bugprone-use-after-move): the moved-from state is what these tests use.

TEST(MovedFrom, StreamIsNeverTheDefaultStream) {
  std::vector<cf> h(64, cf(1.0F, 0.0F));
  const TensorView v(h.data(), {64});
  Stream s;
  Stream taken(std::move(s));
  const std::vector<std::string> moved = {"Stream", "moved from"};
  expect_state_error([&] { (void)fft(v, {.stream = s}); }, moved);
  expect_state_error([&] { (void)Tensor::empty({4}, f32, Device::cpu(), s); }, moved);
  expect_state_error([&] { copy(v, v, s); }, moved);
  expect_state_error([&] { StreamScope scope(s); }, moved);
  expect_state_error([&] { (void)s.native(); }, {"Stream::native", "moved from"});
  expect_state_error([&] { (void)s.device(); }, {"Stream::device", "moved from"});
  expect_state_error([&] { (void)s.ref(); }, moved);
  expect_state_error([&] { s.synchronize(); }, {"Stream::synchronize", "moved from"});
  expect_state_error(
      [&] {
        Event e;
        e.record(s);
      },
      moved);
  EXPECT_FALSE(s.owning());
  EXPECT_EQ(fmt::format("{}", s), "Stream(moved-from)");  // was "Stream(0x0, cuda:-1, not owning)"
  s = std::move(taken);                                   // assigning brings it back
  (void)fft(v, {.stream = s});
}

TEST(MovedFrom, StreamValidSaysWhetherItRefersToAStream) {
  Stream s;
  EXPECT_TRUE(s.valid());
  Stream taken(std::move(s));
  EXPECT_FALSE(s.valid());
  EXPECT_TRUE(taken.valid());
}

TEST(MovedFrom, EventIsAStateError) {
  Event e;
  e.record();
  Event taken(std::move(e));
  expect_state_error([&] { e.record(); }, {"Event::record", "moved from"});
  expect_state_error([&] { (void)e.done(); }, {"Event::done", "moved from"});
  expect_state_error([&] { EventRef ref(e); }, {"moved from"});
  EXPECT_EQ(fmt::format("{}", e), "Event(moved-from)");
}

TEST(MovedFrom, TensorIsUndefinedAndAStateErrorAsAnOperand) {
  Tensor t = Tensor::empty({8, 8}, c64);
  Tensor taken(std::move(t));
  // The moved-from Tensor views nothing: before, it kept the view of memory that only `taken` owns now.
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.data(), nullptr);
  const std::vector<std::string> undefined = {"undefined", "moved from"};
  expect_state_error([&] { (void)fft(t); }, undefined);
  expect_state_error([&] { FFT f(t); }, undefined);
  expect_state_error([&] { (void)matmul(t, taken); }, undefined);
  expect_state_error([&] { copy(taken, t); }, undefined);
  expect_state_error([&] { (void)t.to(Device::cpu()); }, {"Tensor::to", "undefined"});
  expect_state_error([&] { t.record_stream(current_stream()); }, {"Tensor::record_stream", "undefined"});
  expect_state_error([&] { (void)Tensor::alias(t, taken.view()); }, undefined);

  Tensor assigned;
  assigned = std::move(taken);
  EXPECT_FALSE(taken.defined());
  EXPECT_TRUE(assigned.defined());
  EXPECT_EQ(fft(assigned).numel(), 64);
}

TEST(MovedFrom, TensorRefIsNoOperand) {
  std::vector<float> h(16, 1.0F);
  Tensor owner = Tensor::empty({16}, f32);
  TensorRef ref(owner);
  TensorRef taken(std::move(ref));
  EXPECT_FALSE(ref.owning());
  EXPECT_EQ(ref.view().data(), nullptr);  // not a borrowed view of the memory `taken` shares
  EXPECT_EQ(taken.view().data(), owner.data());
}

TEST(MovedFrom, FftAndMatmulAreStateErrors) {
  std::vector<cf> h(64, cf(1.0F, 0.0F));
  FFT f(TensorView(h.data(), {64}));
  FFT g(std::move(f));
  expect_state_error([&] { (void)f.execute(); }, {"FFT", "moved from"});
  expect_state_error([&] { f.plan(); }, {"FFT", "moved from"});

  std::vector<float> a(16, 1.0F);
  Matmul m(TensorView(a.data(), {4, 4}), TensorView(a.data(), {4, 4}));
  Matmul n(std::move(m));
  expect_state_error([&] { (void)m.execute(); }, {"Matmul", "moved from"});
  expect_state_error(
      [&] {
        m.reset_operand(static_cast<MatmulOperand>(9), TensorView(a.data(), {4, 4}));
      },
      {"Matmul", "moved from"});
}

// NOLINTEND(bugprone-use-after-move)

}  // namespace
}  // namespace cuplan
