// SPDX-License-Identifier: Apache-2.0
// The layout arithmetic of one rank's distributed FFT, before any operand exists: the resolved type and
// decomposition, the rank's boxes (also DistributedFFT::boxes), and views of boxes and chunks.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuplan/errors.hpp"
#include "distributed/distributed_fft_impl.hpp"
#include "distributed/option_range.hpp"

namespace cuplan::detail {

Shape dist::shape_of(const Box& box) {
  Shape s;
  for (int d = 0; d < box.ndim; ++d) s.push_back(box.n[static_cast<std::size_t>(d)]);
  return s;
}

std::string box_text(const dist::Box& box) {
  std::vector<std::int64_t> lo(box.lo.begin(), box.lo.begin() + box.ndim);
  return fmt::format("offset ({}) extent {}", fmt::join(lo, ", "), dist::shape_text(dist::shape_of(box)));
}

DistributedBox public_box(const dist::Box& box) {
  DistributedBox out;
  for (int d = 0; d < box.ndim; ++d) {
    out.offset.push_back(box.lo[static_cast<std::size_t>(d)]);
    out.extent.push_back(box.n[static_cast<std::size_t>(d)]);
  }
  return out;
}

dist::Type to_dist(FFTType t) {
  return t == FFTType::c2c ? dist::Type::c2c : t == FFTType::r2c ? dist::Type::r2c : dist::Type::c2r;
}

TensorView chunk_view(const TensorView& whole, const dist::Box& owner, const dist::Box& chunk) {
  const Shape shape = dist::shape_of(chunk);
  const auto offset = static_cast<std::size_t>(dist::local_offset(owner, chunk.lo)) * whole.dtype().size();
  return TensorView(static_cast<const char*>(whole.data()) + offset, whole.dtype(), shape, row_major_strides(shape),
                    whole.device(), whole.memory_space());
}

Resolved resolve_transform(int rank, int size, const Shape& global_shape, DType dtype,
                           const DistributedFFTOptions& options) {
  // Every option by number first, so that none out of range is read as another value below.
  if (options.fft_type) dist::check_enum(*options.fft_type, FFTType::c2r, "fft_type", "FFTType");
  dist::check_enum(options.decomposition, Decomposition::pencil, "decomposition", "Decomposition");
  dist::check_enum(options.input_layout, InputLayout::transposed, "input_layout", "InputLayout");
  dist::check_enum(options.result_layout, ResultLayout::optimized, "result_layout", "ResultLayout");
  dist::check_enum(options.normalization, Normalization::ortho, "normalization", "Normalization");
  dist::check_enum(options.exchange, ExchangeMethod::nccl, "exchange", "ExchangeMethod");
  Resolved r;
  r.type = options.fft_type.value_or(dtype.is_complex() ? FFTType::c2c : FFTType::r2c);
  const bool real_input = r.type == FFTType::r2c;
  if (real_input ? !(dtype == f32 || dtype == f64) : !(dtype == c64 || dtype == c128))
    throw InvalidArgument(fmt::format("local_operand: a {} transform takes {} operands, got dtype {}",
                                      to_string(r.type), real_input ? "f32 or f64" : "c64 or c128", dtype.name()));
  const bool tin = options.input_layout == InputLayout::transposed;
  const bool tout = options.result_layout == ResultLayout::optimized;
  if (tin && r.type == FFTType::r2c)
    throw InvalidArgument("input_layout: transposed input is for C2C and C2R (R2C input is real and natural)");
  if (tout && r.type == FFTType::c2r)
    throw InvalidArgument("result_layout: optimized is for C2C and R2C (the C2R result is real and natural)");
  if (tin && tout)
    throw InvalidArgument("input_layout transposed with result_layout optimized: at most one side is transposed");
  const int ndim = global_shape.size();
  if (ndim != 2 && ndim != 3)
    throw InvalidArgument(
        fmt::format("global_shape: expected 2 or 3 dimensions, got {}", dist::shape_text(global_shape)));
  for (int d = 0; d < ndim; ++d) r.real_shape[static_cast<std::size_t>(d)] = global_shape[d];
  // The complex array of an R2C or C2R is the larger one; fields multiply every rank's share alike.
  dist::check_element_count(std::span(r.real_shape).first(static_cast<std::size_t>(ndim)),
                            std::int64_t{2} * static_cast<std::int64_t>(dtype.real().size()), "global_shape");
  r.complex_shape = r.real_shape;
  if (r.type != FFTType::c2c) r.complex_shape[static_cast<std::size_t>(ndim - 1)] = global_shape[ndim - 1] / 2 + 1;
  const auto request = options.decomposition == Decomposition::slab     ? dist::Request::slab
                       : options.decomposition == Decomposition::pencil ? dist::Request::pencil
                                                                        : dist::Request::automatic;
  const std::vector<std::int64_t> shape(global_shape.begin(), global_shape.end());
  r.layout =
      dist::resolve(request, options.process_grid, shape, r.complex_shape[static_cast<std::size_t>(ndim - 1)], size);
  const int last = r.layout.stages() - 1;
  r.in_box = dist::stage_box(r.layout, real_input ? r.real_shape : r.complex_shape, tin ? last : 0, rank);
  r.out_box = dist::stage_box(r.layout, r.type == FFTType::c2r ? r.real_shape : r.complex_shape, tout ? last : 0, rank);
  return r;
}

DistributedBoxes boxes_of(const Resolved& r) {
  return {public_box(r.in_box),
          public_box(r.out_box),
          r.layout.kind == dist::Kind::slab ? Decomposition::slab : Decomposition::pencil,
          {r.layout.rows, r.layout.cols}};
}

}  // namespace cuplan::detail
