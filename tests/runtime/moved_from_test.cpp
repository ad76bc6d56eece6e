// SPDX-License-Identifier: Apache-2.0
// Moved-from objects of every public movable type: using one is a StateError naming the type and what was done,
// never a silent default (a moved-from Stream standing for the legacy default stream, a moved-from Tensor still
// viewing memory it no longer owns). CPU operands; the same calls run on a GPU machine with CUDA streams.

#include <gtest/gtest.h>

#include <algorithm>
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

// An undefined Tensor given where a call takes a TensorRef: the call's StateError names the parameter it came in as,
// whichever it is, on the class and the function forms and on a plan-cache hit as on a miss. Before, every one
// said "operand", raised while the argument was converted (an `out` too), or an `out` became an empty view refused
// as a shape mismatch.
TEST(MovedFrom, UndefinedTensorIsAStateErrorNamingTheParameter) {
  const Tensor undefined;
  const auto named = [](const std::string& where) {
    return std::vector<std::string>{where + ": expected a defined Tensor, got an undefined one"};
  };
  Tensor x = Tensor::empty({8, 8}, c64), y = Tensor::empty({8, 8}, c64);
  std::fill_n(x.data<cf>(), 64, cf(1.0F, 0.0F));

  // FFT: the class form's operand, out and reset operand; the function forms' x and out, on a miss and on a hit.
  expect_state_error([&] { FFT f(undefined); }, named("FFT: operand"));
  FFT f(x);
  f.plan();
  expect_state_error([&] { (void)f.execute({.out = undefined}); }, named("FFT.execute: out"));
  expect_state_error([&] { f.reset_operand(undefined); }, named("FFT.reset_operand: operand"));
  EXPECT_EQ(f.execute({.out = y}).data(), y.data());  // still usable
  expect_state_error([&] { (void)fft(undefined); }, named("fft: x"));
  expect_state_error([&] { (void)ifft(undefined); }, named("ifft: x"));
  expect_state_error([&] { fft(x, undefined, {.axes = {1}}); }, named("fft: out"));  // a miss
  fft(x, y, {.axes = {1}});
  expect_state_error([&] { fft(x, undefined, {.axes = {1}}); }, named("fft: out"));  // a hit
  expect_state_error([&] { fft(undefined, y, {.axes = {1}}); }, named("fft: x"));

  // RealTransform and the real-to-real function forms.
  Tensor r = Tensor::empty({16}, f64), ry = Tensor::empty({16}, f64);
  std::fill_n(r.data<double>(), 16, 1.0);
  expect_state_error([&] { RealTransform t(undefined); }, named("RealTransform: operand"));
  RealTransform t(r);
  t.plan();
  expect_state_error([&] { (void)t.execute({.out = undefined}); }, named("RealTransform.execute: out"));
  expect_state_error([&] { t.reset_operand(undefined); }, named("RealTransform.reset_operand: operand"));
  expect_state_error([&] { (void)dct(undefined); }, named("dct: x"));
  dct(r, ry);
  expect_state_error([&] { dct(r, undefined); }, named("dct: out"));
  expect_state_error([&] { idstn(r, undefined); }, named("idstn: out"));

  // Convolution and fftconvolve: operand, kernel and out.
  Tensor k = Tensor::empty({3}, f64);
  std::fill_n(k.data<double>(), 3, 1.0);
  expect_state_error([&] { Convolution c(undefined, k); }, named("Convolution: operand"));
  expect_state_error([&] { Convolution c(r, undefined); }, named("Convolution: kernel"));
  Convolution c(r, k);
  c.plan();
  expect_state_error([&] { (void)c.execute({.out = undefined}); }, named("Convolution.execute: out"));
  expect_state_error([&] { c.reset_kernel(undefined); }, named("Convolution.reset_kernel: kernel"));
  expect_state_error([&] { (void)fftconvolve(undefined, k); }, named("fftconvolve: x"));
  expect_state_error([&] { (void)fftconvolve(r, undefined); }, named("fftconvolve: kernel"));
  expect_state_error([&] { fftconvolve(r, k, undefined); }, named("fftconvolve: out"));

  // Matmul: a, b, the options' tensors, execute's out, reset operands and the replacing epilog's inputs.
  Tensor a = Tensor::empty({4, 4}, f32), d = Tensor::empty({4, 4}, f32);
  std::fill_n(a.data<float>(), 16, 1.0F);
  expect_state_error([&] { Matmul m(undefined, a); }, named("Matmul: a"));
  expect_state_error([&] { Matmul m(a, undefined); }, named("Matmul: b"));
  expect_state_error([&] { Matmul m(a, a, {.c = undefined, .beta = 1.0}); }, named("Matmul: c"));
  expect_state_error([&] { Matmul m(a, a, {.epilog = Epilog::bias, .bias = undefined}); }, named("Matmul: bias"));
  MatmulOptions scaled;
  scaled.scales.a.tensor = undefined;
  expect_state_error([&] { Matmul m(a, a, scaled); }, named("Matmul: scales.a.tensor"));
  Matmul m(a, a);
  m.plan();
  expect_state_error([&] { (void)m.execute({.out = undefined}); }, named("Matmul.execute: out"));
  expect_state_error([&] { m.reset_operand(MatmulOperand::b, undefined); }, named("Matmul.reset_operand: b"));
  expect_state_error([&] { m.reset_operands({.a = undefined}); }, named("Matmul.reset_operands: a"));
  expect_state_error([&] { m.plan({.epilog = Epilog::bias, .bias = undefined}); }, named("Matmul.plan: bias"));
  EXPECT_EQ(m.execute({.out = d}).data(), d.data());  // still usable
  expect_state_error([&] { (void)matmul(undefined, a); }, named("matmul: a"));
  (void)matmul(a, a);
  expect_state_error([&] { (void)matmul(a, undefined); }, named("matmul: b"));  // a hit
  expect_state_error([&] { (void)matmul(a, a, {.c = undefined, .beta = 1.0}); }, named("matmul: c"));
  expect_state_error([&] { (void)matmul_with_aux(a, a, {.epilog_aux = undefined}); },
                     named("matmul_with_aux: epilog_aux"));

  // copy and Tensor::alias.
  expect_state_error([&] { copy(undefined, d); }, named("copy: src"));
  expect_state_error([&] { copy(d, undefined); }, named("copy: dst"));
  expect_state_error([&] { copy(TensorRef(a), TensorRef(undefined)); }, named("copy: dst"));
  expect_state_error([&] { (void)Tensor::alias(undefined, a.view()); }, named("Tensor::alias: owner"));
}

// NOLINTEND(bugprone-use-after-move)

}  // namespace
}  // namespace cuplan
