// SPDX-License-Identifier: Apache-2.0
// Consumer of an installed cuplan: includes the umbrella header (and no formatter), makes tensors, copies between
// layouts, and reads a typed error. Exits 0 when every check holds.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuplan/cuplan.hpp>

// The umbrella header leaves fmt out: formatting cuplan types is opt-in (cuplan/format.hpp, format_main.cpp).
#ifdef FMT_VERSION
#error "cuplan/cuplan.hpp includes fmt; its formatters belong to cuplan/format.hpp"
#endif

namespace cp = cuplan;

int main() {
  int failures = 0;
  auto expect = [&](bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += ok ? 0 : 1;
  };

  std::printf("cuplan consumer: CUDA available: %s\n", cp::cuda_available() ? "yes" : "no");
  std::printf("cuplan %s (config.hpp): distributed %d, DLPack %d.%d\n", CUPLAN_VERSION_STRING, CUPLAN_HAS_DISTRIBUTED,
              CUPLAN_DLPACK_MAJOR_VERSION, CUPLAN_DLPACK_MINOR_VERSION);
#ifdef CUPLAN_CONSUMER_PACKAGE_VERSION
  expect(std::strcmp(CUPLAN_VERSION_STRING, CUPLAN_CONSUMER_PACKAGE_VERSION) == 0,
         "config.hpp has the version of the package found");
#endif
#ifdef CUPLAN_CONSUMER_HAS_DISTRIBUTED_TARGET  // CMake consumers; the pkg-config build has no target to compare
  expect(CUPLAN_HAS_DISTRIBUTED == CUPLAN_CONSUMER_HAS_DISTRIBUTED_TARGET,
         "config.hpp says the distributed component exists exactly when cuplan::distributed does");
#endif

  // A 3 x 4 row-major matrix copied into a column-major host tensor: element (i, j) keeps its value.
  constexpr std::int64_t rows = 3, cols = 4;
  std::vector<double> values(rows * cols);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = 0.5 * static_cast<double>(k);
  cp::TensorView row_major(values.data(), {rows, cols});
  std::vector<double> transposed_storage(rows * cols, -1.0);
  cp::TensorView column_major(transposed_storage.data(), {rows, cols}, cp::column_major_strides({rows, cols}));
  cp::copy(row_major, column_major);
  bool same = true;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) same = same && transposed_storage[j * rows + i] == values[i * cols + j];
  expect(same, "copy from row-major to column-major keeps every element");

  auto owned = cp::Tensor::empty({rows, cols}, cp::f64);
  expect(owned.owning() && owned.numel() == rows * cols && owned.dtype() == cp::f64, "owning host tensor");

  // Mismatched shapes are a typed error naming what is wrong.
  std::vector<double> small(2);
  try {
    cp::copy(row_major, cp::TensorView(small.data(), {2}));
    expect(false, "copy between different shapes throws InvalidArgument");
  } catch (const cp::InvalidArgument& error) {
    std::printf("  (message: %s)\n", error.what());
    expect(true, "copy between different shapes throws InvalidArgument");
  }
  // The real-to-real API through the library's exported symbols: scipy.fft.dct([1, 2, 3, 4]) is [20, ...], and a
  // type out of range is a typed error.
  std::vector<double> ramp{1, 2, 3, 4};
  const cp::Tensor dct = cp::dct(cp::TensorView(ramp.data(), {4}), {.execution = cp::Execution::cpu()});
  expect(dct.data<double>()[0] == 20.0, "dct of [1, 2, 3, 4] starts with 20");
  try {
    (void)cp::idst(cp::TensorView(ramp.data(), {4}), {.type = 5, .execution = cp::Execution::cpu()});
    expect(false, "idst of type 5 throws InvalidArgument");
  } catch (const cp::InvalidArgument&) {
    expect(true, "idst of type 5 throws InvalidArgument");
  }
  return failures == 0 ? 0 : 1;
}
