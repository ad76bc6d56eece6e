// SPDX-License-Identifier: Apache-2.0
#include "matmul/routes/staging_plan.hpp"

#include <fmt/format.h>
#include <iterator>

#include <algorithm>

#include "cuplan/enum_name.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail::mm {

namespace {

using Kind = StagingStep::Kind;

// Alignment padding: up to five parts per slot (A, B, C, bias in; D out) and two resident parts, each rounded up
// to 256 bytes. Counted once so that every plan's exact byte count stays within the limit.
constexpr std::size_t padding = 256 * (5 * staging::max_slots + 2);

std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  return (a + b - 1) / b;
}
std::size_t mul(std::int64_t count, std::size_t bytes) noexcept {
  return static_cast<std::size_t>(count) * bytes;
}

// Balanced blocks of at most `most` along `extent`: the same count, the last block as full as possible.
std::int64_t balanced(std::int64_t extent, std::int64_t most) noexcept {
  most = std::clamp<std::int64_t>(most, 1, extent);
  return ceil_div(extent, ceil_div(extent, most));
}

struct Sizes {
  std::size_t a_row, b_col, d_el, bias_el, ed;
  std::size_t a_item, b_item, dc_item, bias_item;
};

Sizes sizes_of(const StagingRequest& r) noexcept {
  Sizes s{};
  s.a_row = mul(r.k, r.a_element);
  s.b_col = mul(r.k, r.b_element);
  s.ed = r.d_element;
  s.d_el = r.d_element * (r.c ? 2 : 1);
  s.bias_el = r.bias ? r.d_element : 0;
  s.a_item = mul(r.m, s.a_row);
  s.b_item = mul(r.n, s.b_col);
  s.dc_item = mul(r.m * r.n, s.d_el);
  s.bias_item = mul(r.m, s.bias_el);
  return s;
}

// Resident uploads of a block of `rows` rows of `row_bytes` each, in pieces no larger than `piece` bytes (at least
// one row): the pinned slots stay the size of the input slots.
void add_pieces(StagingPlan& plan, StagingStep step, std::int64_t rows, std::size_t row_bytes, std::size_t piece) {
  const std::int64_t per =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(piece / std::max<std::size_t>(1, row_bytes)));
  const std::int64_t first = step.row_begin;
  for (std::int64_t r = 0; r < rows; r += per) {
    step.row_begin = first + r;
    step.rows = std::min(per, rows - r);
    step.block_row = r;
    plan.piece_bytes = std::max(plan.piece_bytes, mul(step.rows, row_bytes));
    plan.steps.push_back(step);
  }
}

void add_tile(StagingPlan& plan, std::int64_t batch, std::int64_t batches, std::int64_t row, std::int64_t rows,
              std::int64_t col, std::int64_t cols) {
  StagingStep t;
  t.batch_begin = batch;
  t.batches = batches;
  t.row_begin = row;
  t.rows = rows;
  t.col_begin = col;
  t.cols = cols;
  plan.steps.push_back(t);
  ++plan.tiles;
}

// Offsets of C and bias after the first streamed block(s) of a slot; returns the slot's bytes.
std::size_t lay_out_slot(StagingPlan& plan, const StagingRequest& r, std::size_t streamed, std::int64_t d_elements,
                         std::int64_t bias_elements) {
  std::size_t at = streamed;
  plan.slot_c = at;
  if (r.c) at += slot_part(mul(d_elements, r.d_element));
  plan.slot_bias = at;
  if (r.bias) at += slot_part(mul(bias_elements, r.d_element));
  plan.out_slot_bytes = slot_part(mul(d_elements, r.d_element));
  return at;
}

void finish(StagingPlan& plan, const StagingRequest& r, const staging::ChunkPlan& chunks) {
  plan.slots = chunks.slots;
  plan.device_bytes = r.workspace + plan.resident_bytes +
                      static_cast<std::size_t>(plan.slots) * (plan.in_slot_bytes + plan.out_slot_bytes);
  plan.piece_bytes = std::max(plan.piece_bytes, plan.in_slot_bytes);
}

StagingPlan plan_batches(const StagingRequest& r, const Sizes& s, std::size_t room) {
  const std::size_t unit = s.a_item + (r.b_batched ? s.b_item : 0) + s.dc_item + s.bias_item;
  const std::size_t resident = r.b_batched ? 0 : s.b_item;
  const staging::ChunkPlan chunks = staging::plan_chunks({r.batch, unit, resident, room, r.target_bytes, r.who});
  StagingPlan plan;
  plan.schedule = StagingSchedule::batches;
  plan.batch_chunk = chunks.chunk;
  plan.row_chunk = r.m;
  plan.col_chunk = r.n;
  const std::int64_t nb = chunks.chunk;
  std::size_t streamed = slot_part(mul(nb * r.m, s.a_row));
  plan.slot_b = streamed;
  plan.b_in_slot = r.b_batched;
  if (r.b_batched) streamed += slot_part(mul(nb, s.b_item));
  plan.in_slot_bytes = lay_out_slot(plan, r, streamed, nb * r.m * r.n, nb * r.m);
  plan.resident_bytes = r.b_batched ? 0 : slot_part(s.b_item);
  if (!r.b_batched) {
    StagingStep b;
    b.kind = Kind::resident_b;
    b.cols = r.n;
    add_pieces(plan, b, r.k, mul(r.n, r.b_element), plan.in_slot_bytes);
  }
  for (std::int64_t i = 0; i < chunks.count; ++i) add_tile(plan, chunks.begin(i), chunks.size(i), 0, r.m, 0, r.n);
  plan.moved_bytes =
      (r.b_batched ? mul(r.batch, s.b_item) : s.b_item) + mul(r.batch, s.a_item + s.dc_item + s.bias_item);
  finish(plan, r, chunks);
  return plan;
}

StagingPlan plan_rows(const StagingRequest& r, const Sizes& s, std::size_t room) {
  const std::size_t unit = s.a_row + mul(r.n, s.d_el) + s.bias_el;
  const staging::ChunkPlan chunks = staging::plan_chunks({r.m, unit, s.b_item, room, r.target_bytes, r.who});
  StagingPlan plan;
  plan.schedule = StagingSchedule::rows;
  plan.row_chunk = chunks.chunk;
  plan.col_chunk = r.n;
  plan.in_slot_bytes = lay_out_slot(plan, r, slot_part(mul(chunks.chunk, s.a_row)), chunks.chunk * r.n, chunks.chunk);
  plan.resident_bytes = slot_part(s.b_item);
  for (std::int64_t b = 0; b < r.batch; ++b) {
    if (b == 0 || r.b_batched) {
      StagingStep step;
      step.kind = Kind::resident_b;
      step.batch_begin = b;
      step.cols = r.n;
      add_pieces(plan, step, r.k, mul(r.n, r.b_element), plan.in_slot_bytes);
    }
    for (std::int64_t i = 0; i < chunks.count; ++i) add_tile(plan, b, 1, chunks.begin(i), chunks.size(i), 0, r.n);
  }
  plan.moved_bytes =
      (r.b_batched ? mul(r.batch, s.b_item) : s.b_item) + mul(r.batch, s.a_item + s.dc_item + s.bias_item);
  finish(plan, r, chunks);
  return plan;
}

// N split, B's columns resident: each block of B's columns is uploaded once (per batch entry when B is batched) and
// every row of A is uploaded once per block of columns.
StagingPlan plan_b_columns(const StagingRequest& r, const Sizes& s, std::size_t room) {
  const std::int64_t fit = static_cast<std::int64_t>((room - s.a_row - s.bias_el) / (s.b_col + s.d_el));
  const std::int64_t half = std::max<std::int64_t>(1, static_cast<std::int64_t>(room / 2 / s.b_col));
  const std::int64_t nc = balanced(r.n, std::min(fit, half));
  const std::int64_t blocks = ceil_div(r.n, nc);
  const std::size_t unit = s.a_row + mul(nc, s.d_el) + s.bias_el;
  const staging::ChunkPlan chunks = staging::plan_chunks({r.m, unit, mul(nc, s.b_col), room, r.target_bytes, r.who});
  StagingPlan plan;
  plan.schedule = StagingSchedule::b_columns;
  plan.row_chunk = chunks.chunk;
  plan.col_chunk = nc;
  plan.in_slot_bytes = lay_out_slot(plan, r, slot_part(mul(chunks.chunk, s.a_row)), chunks.chunk * nc, chunks.chunk);
  plan.resident_bytes = slot_part(mul(nc, s.b_col));
  auto resident = [&](std::int64_t b, std::int64_t col) {
    StagingStep step;
    step.kind = Kind::resident_b;
    step.batch_begin = b;
    step.col_begin = col;
    step.cols = std::min(nc, r.n - col);
    add_pieces(plan, step, r.k, mul(step.cols, r.b_element), plan.in_slot_bytes);
  };
  auto tiles = [&](std::int64_t b, std::int64_t col) {
    for (std::int64_t i = 0; i < chunks.count; ++i)
      add_tile(plan, b, 1, chunks.begin(i), chunks.size(i), col, std::min(nc, r.n - col));
  };
  if (r.b_batched) {
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t col = 0; col < r.n; col += nc) {
        resident(b, col);
        tiles(b, col);
      }
  } else {  // one B: each block of its columns serves every batch entry before the next block comes
    for (std::int64_t col = 0; col < r.n; col += nc) {
      resident(0, col);
      for (std::int64_t b = 0; b < r.batch; ++b) tiles(b, col);
    }
  }
  plan.moved_bytes = (r.b_batched ? mul(r.batch, s.b_item) : s.b_item) + mul(r.batch * blocks, s.a_item + s.bias_item) +
                     mul(r.batch, s.dc_item);
  finish(plan, r, chunks);
  return plan;
}

// N split, A's rows resident: each block of A's rows (and its bias) is uploaded once and all of B (of that batch
// entry) streams past it once per block of rows.
StagingPlan plan_a_rows(const StagingRequest& r, const Sizes& s, std::size_t room) {
  const std::size_t per_row = s.a_row + s.bias_el;
  const std::int64_t fit = static_cast<std::int64_t>((room - s.b_col) / (per_row + s.d_el));
  const std::int64_t half = std::max<std::int64_t>(1, static_cast<std::int64_t>(room / 2 / per_row));
  const std::int64_t mc = balanced(r.m, std::min(fit, half));
  const std::int64_t blocks = ceil_div(r.m, mc);
  const std::size_t unit = s.b_col + mul(mc, s.d_el);
  const staging::ChunkPlan chunks = staging::plan_chunks({r.n, unit, mul(mc, per_row), room, r.target_bytes, r.who});
  StagingPlan plan;
  plan.schedule = StagingSchedule::a_rows;
  plan.row_chunk = mc;
  plan.col_chunk = chunks.chunk;
  plan.in_slot_bytes = lay_out_slot(plan, r, slot_part(mul(chunks.chunk, s.b_col)), mc * chunks.chunk, 0);
  plan.resident_bias = slot_part(mul(mc, s.a_row));
  plan.resident_bytes = plan.resident_bias + (r.bias ? slot_part(mul(mc, r.d_element)) : 0);
  for (std::int64_t b = 0; b < r.batch; ++b)
    for (std::int64_t row = 0; row < r.m; row += mc) {
      const std::int64_t rows = std::min(mc, r.m - row);
      StagingStep step;
      step.kind = Kind::resident_a;
      step.batch_begin = b;
      step.row_begin = row;
      add_pieces(plan, step, rows, s.a_row, plan.in_slot_bytes);
      if (r.bias) {
        StagingStep bias;
        bias.kind = Kind::resident_bias;
        bias.batch_begin = b;
        bias.row_begin = row;
        bias.rows = rows;
        plan.piece_bytes = std::max(plan.piece_bytes, mul(rows, r.d_element));
        plan.steps.push_back(bias);
      }
      for (std::int64_t j = 0; j < chunks.count; ++j) add_tile(plan, b, 1, row, rows, chunks.begin(j), chunks.size(j));
    }
  plan.moved_bytes = mul(r.batch, s.a_item + s.bias_item + s.dc_item) + mul(r.batch * blocks, s.b_item);
  finish(plan, r, chunks);
  return plan;
}

}  // namespace

const char* to_string(StagingSchedule schedule) noexcept {
  static constexpr const char* names[] = {"batches", "rows", "b_columns", "a_rows"};
  static_assert(std::size(names) == static_cast<std::size_t>(StagingSchedule::a_rows) + 1);
  return detail::enum_name(schedule, names);
}

std::size_t staging_minimum_limit(const StagingRequest& r) noexcept {
  const Sizes s = sizes_of(r);
  return r.workspace + padding + s.a_row + s.b_col + s.d_el + s.bias_el;
}

StagingPlan plan_staging(const StagingRequest& r) {
  if (r.m <= 0 || r.n <= 0 || r.k <= 0 || r.batch <= 0 || r.a_element == 0 || r.b_element == 0 || r.d_element == 0)
    throw InvalidArgument(fmt::format("{}: staging: expected positive sizes, got M {} N {} K {} batch {}", r.who, r.m,
                                      r.n, r.k, r.batch));
  const std::size_t minimum = staging_minimum_limit(r);
  if (r.limit < minimum)
    throw InvalidArgument(fmt::format(
        "{}: device_memory_limit: {} bytes cannot hold one row of A ({} bytes), one column of B ({}) and one element "
        "of D{} next to the workspace reserve ({}); the smallest limit that works is {} bytes",
        r.who, r.limit, mul(r.k, r.a_element), mul(r.k, r.b_element), r.c ? " and C" : "", r.workspace, minimum));
  const Sizes s = sizes_of(r);
  const std::size_t room = r.limit - r.workspace - padding;  // what the blocks of data may use
  // Whole batch entries per tile when one entry is small enough to pipeline three of them (or the whole batch fits).
  if (r.batch > 1) {
    const std::size_t unit = s.a_item + (r.b_batched ? s.b_item : 0) + s.dc_item + s.bias_item;
    const std::size_t resident = r.b_batched ? 0 : s.b_item;
    const bool pipelined = unit <= r.target_bytes && resident + staging::max_slots * unit <= room;
    if (resident + unit <= room && (pipelined || resident + mul(r.batch, unit) <= room))
      return plan_batches(r, s, room);
  }
  // One entry's B fits with a row of A and D: B stays, the rows of A and D stream.
  if (s.b_item + s.a_row + mul(r.n, s.d_el) + s.bias_el <= room) return plan_rows(r, s, room);
  // B does not fit: split N too. B's columns resident costs (B + A x column blocks) of uploads, A's rows resident
  // costs (A + B x row blocks); D and C move once either way. Take the schedule that moves fewer bytes (B's columns
  // on a tie: its tiles are whole rows of A, the inner product's better shape).
  StagingPlan by_columns = plan_b_columns(r, s, room);
  StagingPlan by_rows = plan_a_rows(r, s, room);
  return by_rows.moved_bytes < by_columns.moved_bytes ? std::move(by_rows) : std::move(by_columns);
}

const char* unsplittable_reason(const Problem& p, bool batch_collapsible) noexcept {
  const EpilogTraits t = epilog_traits(p.epilog);
  if (t.bias_gradient) return "its bias gradient reduces over the whole product";
  if (t.aux_output) return "its aux output is one buffer in the backend's own layout";
  if (t.aux_input) return "its aux input is one buffer in the backend's own layout";
  if (p.a_dtype.is_fp8()) return "fp8 products keep their operands in the layout cuBLASLt requires";
  if (p.conjugate_a || p.conjugate_b) return "conjugated operands are copied in the orientation cuBLASLt conjugates";
  if (!batch_collapsible) return "an operand's batch axes are not walked by one stride";
  return nullptr;
}

std::int64_t flat_batch_stride(const Shape& batch_shape, const Strides& strides) noexcept {
  std::int64_t flat = 0, next = -1;  // next: the stride the next outer axis of extent > 1 must have
  for (int i = batch_shape.size() - 1; i >= 0; --i) {
    if (batch_shape[i] == 1) continue;
    if (next < 0)
      flat = strides[i];
    else if (strides[i] != next)
      return -1;
    next = strides[i] * batch_shape[i];
  }
  return flat;
}

}  // namespace cuplan::detail::mm
