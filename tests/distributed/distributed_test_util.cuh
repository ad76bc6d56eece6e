// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the distributed FFT tests: scatter and gather of boxes, the single-GPU float64 reference, and one
// correctness case run on every rank. GPU-count gating and the ranks as threads or processes come from
// rank_harness.hpp, as for the other distributed tests.
#include <gtest/gtest.h>

#include <complex>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/distributed.hpp"
#include "distributed/rank_harness.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace {

using cuplan::Communicator;
using cuplan::Decomposition;
using cuplan::DistributedFFT;
using cuplan::FFTType;
using cuplan::testing::local_comms;
using cuplan::testing::on_ranks;
using cplx = std::complex<double>;

std::int64_t prod(const std::vector<std::int64_t>& s) {
  std::int64_t p = 1;
  for (auto e : s) p *= e;
  return p;
}

// Row-major copy between a global host array of shape `g` and the box's local array.
template <class T, class U>
void box_copy(const cuplan::DistributedBox& box, const std::vector<std::int64_t>& g, const T* global, U* local,
              bool to_local, T* global_out = nullptr) {
  cuplan::testing::for_each_box_element(box, g, [&](std::size_t gi, std::size_t li) {
    if (to_local)
      local[li] = static_cast<U>(global[gi]);
    else
      global_out[gi] = static_cast<T>(local[li]);
  });
}

struct Case {
  FFTType type = FFTType::c2c;
  Decomposition decomposition = Decomposition::automatic;
  std::optional<std::array<int, 2>> grid;
  std::vector<std::int64_t> shape;
  cuplan::ResultLayout layout = cuplan::ResultLayout::natural;
  cuplan::Direction direction = cuplan::Direction::forward;
  bool f64 = true;
  cuplan::ExchangeMethod exchange = cuplan::ExchangeMethod::automatic;
  int chunks = 0;
  int fields = 1;        ///< DistributedFFTOptions::fields: each field has its own random data and reference
  bool inplace = false;  ///< DistributedFFTOptions::inplace: the result is the operand's memory
};

std::string name(const Case& c) {
  std::ostringstream s;  // a stream: GCC 12 warns falsely (-Wrestrict) on std::string concatenation at -O3
  s << cuplan::to_string(c.type) << (c.f64 ? " f64 " : " f32 ")
    << (c.decomposition == Decomposition::slab     ? "slab"
        : c.decomposition == Decomposition::pencil ? "pencil"
                                                   : "auto");
  if (c.grid) s << " " << (*c.grid)[0] << "x" << (*c.grid)[1];
  for (auto e : c.shape) s << " " << e;
  s << (c.layout == cuplan::ResultLayout::optimized ? " optimized" : " natural");
  if (c.direction == cuplan::Direction::inverse) s << " inverse";
  s << " " << cuplan::to_string(c.exchange);
  if (c.chunks != 0) s << " chunks " << c.chunks;
  if (c.fields != 1) s << " fields " << c.fields;
  if (c.inplace) s << " in place";
  return s.str();
}

// The single-GPU float64 transform of the whole array (device 0), and its input.
struct Reference {
  std::vector<cplx> in_c, out_c;
  std::vector<double> in_r, out_r;
  std::vector<std::int64_t> in_shape, out_shape;
};

Reference make_reference(const Case& c) {
  CUPLAN_TEST_CUDA(cudaSetDevice(0));
  Reference ref;
  std::vector<std::int64_t> cshape = c.shape;
  cshape.back() = c.type == FFTType::c2c ? cshape.back() : cshape.back() / 2 + 1;
  const cuplan::Shape real_shape{std::span<const std::int64_t>(c.shape)};
  const cuplan::Shape complex_shape{std::span<const std::int64_t>(cshape)};
  cuplan::FFTOptions o;
  o.stream = cuplan::current_stream(cuplan::Device::cuda(0));
  o.last_axis_parity = c.shape.back() % 2 == 0 ? cuplan::Parity::even : cuplan::Parity::odd;
  auto to_dev = [&](const cuplan::TensorView& host) {
    return cuplan::Tensor::wrap(host).to(cuplan::Device::cuda(0), o.stream);
  };
  auto to_host = [&](const cuplan::Tensor& dev) { return dev.to(cuplan::Device::cpu(), o.stream); };
  auto fetch = [](const cuplan::Tensor& host, auto& vec) {
    using V = typename std::decay_t<decltype(vec)>::value_type;
    vec.assign(host.data<V>(), host.data<V>() + host.numel());
  };
  if (c.type == FFTType::r2c || c.type == FFTType::c2r) {
    auto x = cuplan::testing::random_vector<double>(static_cast<std::size_t>(prod(c.shape)));
    const auto spectrum = to_host(cuplan::rfft(to_dev(cuplan::TensorView(x.data(), real_shape)), o));
    if (c.type == FFTType::r2c) {
      ref.in_r = x;
      fetch(spectrum, ref.out_c);
      ref.in_shape = c.shape;
      ref.out_shape = cshape;
    } else {
      fetch(spectrum, ref.in_c);  // Hermitian by construction, so C2R is defined unambiguously
      const auto back = to_host(cuplan::irfft(to_dev(spectrum), o));
      fetch(back, ref.out_r);
      ref.in_shape = cshape;
      ref.out_shape = c.shape;
    }
    return ref;
  }
  ref.in_c = cuplan::testing::random_vector<cplx>(static_cast<std::size_t>(prod(c.shape)));
  const auto dev = to_dev(cuplan::TensorView(ref.in_c.data(), complex_shape));
  const auto out = to_host(c.direction == cuplan::Direction::forward ? cuplan::fft(dev, o) : cuplan::ifft(dev, o));
  fetch(out, ref.out_c);
  ref.in_shape = ref.out_shape = c.shape;
  return ref;
}

template <class T>
double rel_error(const std::vector<T>& got, const std::vector<T>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += std::norm(std::complex<double>(got[i]) - std::complex<double>(want[i]));
    den += std::norm(std::complex<double>(want[i]));
  }
  return std::sqrt(num / den);  // NaN (a poisoned element left unwritten) fails every comparison
}

// One rank's part of a case: scatter every field, transform into a poisoned `out`, gather field f into
// `gathered_*[f]`.
template <class R>
void run_rank(const Case& c, const std::vector<Reference>& refs, Communicator& comm,
              std::vector<std::vector<cplx>>& gathered_c, std::vector<std::vector<double>>& gathered_r, std::mutex& m) {
  using C = std::complex<R>;
  cuplan::DistributedFFTOptions o;
  o.decomposition = c.decomposition;
  o.process_grid = c.grid;
  o.fft_type = c.type;
  o.result_layout = c.layout;
  o.exchange = c.exchange;
  o.chunks = c.chunks;
  o.fields = c.fields;
  o.inplace = c.inplace;
  const cuplan::Stream stream(comm.device());
  o.stream = stream.ref();
  const cuplan::DType in_dtype = c.type == FFTType::r2c ? cuplan::dtype_of<R> : cuplan::dtype_of<C>;
  const auto boxes = DistributedFFT::boxes(comm, cuplan::Shape(std::span<const std::int64_t>(c.shape)), in_dtype, o);
  const std::int64_t n_in = boxes.input.numel();
  const std::int64_t n_out = boxes.output.numel();
  const auto fields = static_cast<std::size_t>(c.fields);
  auto with_fields = [&](const cuplan::Shape& box) {
    if (c.fields == 1) return box;
    cuplan::Shape s{c.fields};
    for (std::int64_t e : box) s.push_back(e);
    return s;
  };
  auto operand = cuplan::Tensor::empty(with_fields(boxes.input.shape()), in_dtype, comm.device(), stream.ref());
  if (c.type == FFTType::r2c) {
    std::vector<R> local(static_cast<std::size_t>(n_in) * fields);
    for (std::size_t f = 0; f < fields; ++f)
      box_copy(boxes.input, refs[f].in_shape, refs[f].in_r.data(), local.data() + f * static_cast<std::size_t>(n_in),
               true);
    cuplan::copy(cuplan::TensorView(local.data(), operand.shape()), operand, stream.ref());
  } else {
    std::vector<C> local(static_cast<std::size_t>(n_in) * fields);
    for (std::size_t f = 0; f < fields; ++f)
      box_copy(boxes.input, refs[f].in_shape, refs[f].in_c.data(), local.data() + f * static_cast<std::size_t>(n_in),
               true);
    cuplan::copy(cuplan::TensorView(local.data(), operand.shape()), operand, stream.ref());
  }
  DistributedFFT plan(comm, cuplan::Shape(std::span<const std::int64_t>(c.shape)), operand, o);
  EXPECT_EQ(plan.input_box(), boxes.input);
  EXPECT_EQ(plan.output_box(), boxes.output);
  plan.plan();
  if (comm.size() > 1 && c.exchange != cuplan::ExchangeMethod::automatic) EXPECT_EQ(plan.exchange_method(), c.exchange);
  if (comm.size() > 1) EXPECT_NE(plan.exchange_method(), cuplan::ExchangeMethod::automatic);
  const cuplan::DType out_dtype = plan.result_dtype();
  const auto direction = c.type == FFTType::c2c ? std::optional<cuplan::Direction>(c.direction) : std::nullopt;
  cuplan::Tensor out;
  if (c.inplace) {
    // The result overwrites the operand: no output to poison; the returned tensor is the operand's memory.
    out = plan.execute({.direction = direction, .stream = stream.ref()});
    EXPECT_EQ(out.data(), operand.data());
    EXPECT_EQ(out.shape(), with_fields(boxes.output.shape()));
  } else {
    out = cuplan::Tensor::empty(with_fields(boxes.output.shape()), out_dtype, comm.device(), stream.ref());
    CUPLAN_TEST_CUDA(cudaMemsetAsync(out.data(), 0xFF, n_out * out_dtype.size() * c.fields, stream));  // NaN poison
    plan.execute(
        {.direction = direction, .stream = stream.ref(), .after = {}, .release_workspace = false, .out = out.view()});
  }
  const auto host = out.to(cuplan::Device::cpu(), stream.ref());
  std::lock_guard lock(m);
  for (std::size_t f = 0; f < fields; ++f) {
    const std::size_t at = f * static_cast<std::size_t>(n_out);
    if (c.type == FFTType::c2r)
      box_copy<double, R>(boxes.output, refs[f].out_shape, nullptr, host.data<R>() + at, false, gathered_r[f].data());
    else
      box_copy<cplx, C>(boxes.output, refs[f].out_shape, nullptr, host.data<C>() + at, false, gathered_c[f].data());
  }
}

void check_case(const Case& c, std::vector<Communicator>& comms) {
  std::ostringstream trace;
  trace << name(c) << " on " << comms.size() << " ranks";
  SCOPED_TRACE(trace.str());
  std::vector<Reference> refs;
  for (int f = 0; f < c.fields; ++f) refs.push_back(make_reference(c));  // fresh random data per field
  std::vector<std::vector<cplx>> got_c;
  std::vector<std::vector<double>> got_r;
  for (const Reference& ref : refs) {
    got_c.emplace_back(ref.out_c.size());
    got_r.emplace_back(ref.out_r.size());
  }
  std::mutex m;
  on_ranks(comms, [&](int, Communicator& comm) {
    if (c.f64)
      run_rank<double>(c, refs, comm, got_c, got_r, m);
    else
      run_rank<float>(c, refs, comm, got_c, got_r, m);
  });
  const double tol = c.f64 ? 1e-12 : 2e-6;
  for (std::size_t f = 0; f < refs.size(); ++f) {
    const double err = c.type == FFTType::c2r ? rel_error(got_r[f], refs[f].out_r) : rel_error(got_c[f], refs[f].out_c);
    EXPECT_LT(err, tol) << name(c) << ", field " << f;
  }
}

}  // namespace
