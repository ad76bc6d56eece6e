#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layering rule of src/ (docs/dev/architecture.md), checked from the include lines of every source file:
#
#   base  <  runtime  <  plan  <  operations (fft, matmul)  <  operations built on them (convolution)
#
#  - a file includes public headers (cuplan/...) and headers of its own layer or of a lower one, never a higher one;
#    every file sits in a layer's folder: a file at the root of src/ is in no layer, and any library header it
#    includes is a violation (no exemption: what joins the operations is registered from below, as the FFTW
#    backend registers its wisdom with the plan layer's tuning file);
#  - operations of one rank do not include each other; convolution builds on the FFT's planner and backends
#    (fft/planner.hpp, FftwPlan, CufftPlan), never the reverse;
#  - a backend folder (fft/cufft, fft/fftw, matmul/cublaslt, matmul/cpu) does not include another backend, nor a
#    route, and only a backend includes its math library's headers (cufft, cuBLASLt, FFTW, CBLAS); fft/callbacks is
#    no backend but what the FFT backends share about prolog and epilog callbacks: every FFT backend may include it,
#    and it includes no backend;
#  - an operation's routes (fft/routes, matmul/routes) may include its backends; its Impl (<op>_impl.*) includes
#    no backend and no route: it reaches them through the route interface;
#  - distributed/exchange, the exchange layer that every distributed operation shares, includes no other header of
#    distributed (the operations sit on it, not it on them), and only it includes NCCL;
#  - inside plan, the folders stand in their own order: the core (the phase and stateful-object contract, files
#    directly in plan/) may include plan/ordering; plan/staging may include the core and plan/ordering;
#    plan/operation (the shell every operation shares) and plan/planning (planning off the caller's thread, on the
#    plan cache) may include the core, plan/ordering and plan/cache; plan/ordering and plan/cache include no other
#    plan header; a plan folder is not a backend folder (no math library).
#
#   check_layers.sh SRC_DIR     exit 1 and one line per violation
#   check_layers.sh --self-test builds a small tree with one violation of each kind and expects each to be found
set -uo pipefail

rank() {
  case "$1" in
    base) echo 1 ;; runtime) echo 2 ;; plan) echo 3 ;; fft | matmul | r2r | distributed) echo 4 ;; convolution) echo 5 ;;
    *) echo 0 ;;
  esac
}

# Whether a file of plan folder $1 may include a header of plan folder $2 ("" is the core, the files of plan/).
plan_may_include() {
  [[ "$1" == "$2" ]] && return 0
  case "$1" in
    "") [[ "$2" == ordering ]] ;;
    staging) [[ -z "$2" || "$2" == ordering ]] ;;
    planning) [[ -z "$2" || "$2" == ordering || "$2" == cache ]] ;;
    operation) [[ -z "$2" || "$2" == ordering || "$2" == cache ]] ;;
    *) return 1 ;;  # ordering, cache and any new folder: self-contained until a rule here says otherwise
  esac
}

check_tree() {
  local src="$1" violations=0 file rel layer header target hl
  while IFS= read -r file; do
    rel="${file#"$src"/}"
    layer="${rel%%/*}"
    local sub="" ; local rest="${rel#*/}"
    [[ "$rest" == */* ]] && sub="${rest%%/*}"
    while IFS= read -r header; do
      target="${header%%/*}"
      [[ "$target" == cuplan ]] && continue
      [[ -e "$src/$header" ]] || continue  # not a library header (e.g. a system header spelled with quotes)
      hl=$(rank "$target")
      if [[ "$rel" != */* ]]; then
        echo "$rel: sits at the root of src/, in no layer, and includes $header ($target): it belongs in a layer"
        violations=$((violations + 1))
      elif ((hl > $(rank "$layer"))); then
        echo "$rel: includes $header, a higher layer ($target above $layer)"; violations=$((violations + 1))
      elif ((hl == 4 && $(rank "$layer") == 4)) && [[ "$target" != "$layer" ]]; then
        echo "$rel: includes $header from another operation ($target)"; violations=$((violations + 1))
      elif [[ "$layer/$sub" == distributed/exchange && "$header" == distributed/* &&
        "$header" != distributed/exchange/* ]]; then
        echo "$rel: the exchange layer includes $header, a distributed operation's header"
        violations=$((violations + 1))
      elif [[ "$layer" == plan && "$target" == plan ]]; then
        local hsub=""; [[ "${header#plan/}" == */* ]] && hsub="${header#plan/}" && hsub="${hsub%%/*}"
        if ! plan_may_include "$sub" "$hsub"; then
          echo "$rel: plan/${sub:-(core)} includes $header of plan/${hsub:-(core)}, not below it"
          violations=$((violations + 1))
        fi
      elif [[ -n "$sub" && "$header" == "$layer"/*/* ]]; then
        local hsub="${header#*/}"; hsub="${hsub%%/*}"
        if [[ "$hsub" == routes && "$sub" != routes ]]; then
          echo "$rel: backend $layer/$sub includes $header, a route (routes sit above the backends)"
          violations=$((violations + 1))
        elif [[ "$hsub" != "$sub" && "$sub" != routes && "$layer/$hsub" != fft/callbacks ]]; then
          echo "$rel: backend $layer/$sub includes $header of backend $layer/$hsub"; violations=$((violations + 1))
        fi
      elif [[ -z "$sub" && -d "$src/$layer/routes" && "${rest%.*}" == *_impl && "$header" == "$layer"/*/* &&
        "$header" != fft/callbacks/* ]]; then
        echo "$rel: the Impl includes $header; it reaches routes and backends through the route interface"
        violations=$((violations + 1))
      fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
    if [[ -z "$sub" || "$layer" == plan ]] &&
      grep -qE '^#include <(cufft|cufftXt|cublasLt|cublas_v2|fftw3|cblas|mkl_cblas|mkl_service|blis|nccl)\.h>' "$file"; then
      echo "$rel: includes a math library header outside a backend folder"; violations=$((violations + 1))
    elif [[ "$layer/$sub" != distributed/exchange ]] && grep -qE '^#include <nccl\.h>' "$file"; then
      echo "$rel: includes NCCL outside the exchange layer (distributed/exchange)"; violations=$((violations + 1))
    fi
  done < <(find "$src" -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) | sort)
  return $((violations > 0))
}

self_test() {
  local tmp; tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp"/{base,runtime,plan,fft/cufft,fft/fftw,matmul,distributed/exchange/nccl}
  touch "$tmp"/runtime/storage.hpp "$tmp"/plan/stateful.hpp "$tmp"/fft/planner.hpp "$tmp"/fft/fftw/fftw_backend.hpp
  touch "$tmp"/matmul/planner.hpp
  printf '#include "runtime/storage.hpp"\n' >"$tmp"/base/geometry.hpp            # base -> runtime
  printf '#include "plan/stateful.hpp"\n' >"$tmp"/runtime/tensor.cpp            # runtime -> plan
  printf '#include "matmul/planner.hpp"\n' >"$tmp"/fft/fft_impl.hpp             # fft -> matmul
  printf '#include "fft/fftw/fftw_backend.hpp"\n' >"$tmp"/fft/cufft/plan.cpp    # backend -> other backend
  printf '#include <cufft.h>\n' >"$tmp"/plan/graph_replay.hpp                    # math library outside a backend
  printf '#include "fft/fftw/fftw_backend.hpp"\n' >"$tmp"/tuning.cpp           # a root file reaching a backend
  printf '#include "plan/stateful.hpp"\n#include "fft/planner.hpp"\n' >"$tmp"/fft/fft.cpp  # allowed
  touch "$tmp"/distributed/decomposition.hpp "$tmp"/distributed/exchange/box.hpp
  printf '#include "distributed/decomposition.hpp"\n' >"$tmp"/distributed/exchange/box_transfer.hpp  # layer -> op
  printf '#include <nccl.h>\n' >"$tmp"/fft/cufft/collective.cpp                 # NCCL outside the exchange layer
  mkdir -p "$tmp"/fft/callbacks && touch "$tmp"/fft/callbacks/callback_set.hpp
  printf '#include "fft/fftw/fftw_backend.hpp"\n' >"$tmp"/fft/callbacks/host.cpp  # shared folder -> backend
  printf '#include "fft/callbacks/callback_set.hpp"\n' >"$tmp"/fft/cufft/plan_callbacks.cpp  # allowed
  # allowed: the exchange layer's own headers and NCCL inside it; an operation on the exchange layer
  printf '#include <nccl.h>\n#include "distributed/exchange/box.hpp"\n' >"$tmp"/distributed/exchange/nccl/peers.cpp
  printf '#include "distributed/exchange/box.hpp"\n' >"$tmp"/distributed/redistribute.cpp
  # plan's own folders: one violation per rule, then what is allowed
  mkdir -p "$tmp"/plan/{staging,cache,ordering}
  touch "$tmp"/plan/phase.hpp "$tmp"/plan/staging/pipeline.hpp "$tmp"/plan/cache/plan_cache.hpp
  touch "$tmp"/plan/ordering/ordering_checker.hpp
  printf '#include "plan/staging/pipeline.hpp"\n' >"$tmp"/plan/phase.cpp                # core -> staging
  printf '#include "plan/cache/plan_cache.hpp"\n' >"$tmp"/plan/execution_target.cpp     # core -> cache
  printf '#include "plan/phase.hpp"\n' >"$tmp"/plan/ordering/ordering_checker.cpp       # ordering -> core
  printf '#include "plan/phase.hpp"\n' >"$tmp"/plan/cache/plan_cache.cpp                # cache -> core
  printf '#include "plan/cache/plan_cache.hpp"\n' >"$tmp"/plan/staging/copy.cpp         # staging -> cache
  printf '#include <cufft.h>\n' >"$tmp"/plan/staging/pinned_ring.cpp                    # math library in a plan folder
  printf '#include "plan/ordering/ordering_checker.hpp"\n' >"$tmp"/plan/phase.hpp      # core -> ordering
  printf '#include "plan/stateful.hpp"\n#include "plan/ordering/ordering_checker.hpp"\n' \
    >"$tmp"/plan/staging/pipeline.cpp                                                  # staging -> core, ordering
  printf '#include "plan/cache/plan_cache.hpp"\n' >"$tmp"/plan/cache/cached_call.hpp   # a folder's own header
  mkdir -p "$tmp"/plan/planning
  printf '#include "plan/staging/pipeline.hpp"\n' >"$tmp"/plan/planning/planned_call.cpp   # planning -> staging
  printf '#include "plan/phase.hpp"\n#include "plan/cache/plan_cache.hpp"\n#include "plan/ordering/ordering_checker.hpp"\n' \
    >"$tmp"/plan/planning/planned_call.hpp                                             # planning -> core, cache, ordering
  mkdir -p "$tmp"/plan/operation && touch "$tmp"/plan/operation/planned_operation.hpp
  printf '#include "plan/operation/planned_operation.hpp"\n' >"$tmp"/plan/object_state.cpp  # core -> operation
  printf '#include "plan/operation/planned_operation.hpp"\n' >"$tmp"/plan/cache/tuning_store.cpp  # cache -> operation
  printf '#include "plan/phase.hpp"\n#include "plan/cache/plan_cache.hpp"\n#include "plan/ordering/ordering_checker.hpp"\n' \
    >"$tmp"/plan/operation/planned_operation.cpp                                       # operation -> core, cache, ordering
  mkdir -p "$tmp"/fft/routes && touch "$tmp"/fft/routes/cpu_route.hpp "$tmp"/fft/fft_route.hpp
  printf '#include "fft/routes/cpu_route.hpp"\n' >"$tmp"/fft/fftw/fftw_wisdom.cpp      # backend -> route
  printf '#include "fft/fft_route.hpp"\n#include "fft/fftw/fftw_backend.hpp"\n' >"$tmp"/fft/fft_impl.cpp  # Impl -> backend
  # allowed: a route on its backend and on the route interface
  printf '#include "fft/fftw/fftw_backend.hpp"\n#include "fft/fft_route.hpp"\n' >"$tmp"/fft/routes/cpu_route.cpp
  local out; out="$(check_tree "$tmp")"; local status=$?
  echo "$out"
  local expected=20 found; found=$(printf '%s\n' "$out" | grep -c .)
  if ((status == 0 || found != expected)); then
    echo "self-test FAILED: expected $expected violations, found $found"; return 1
  fi
  echo "self-test passed: all $expected planted violations found"
}

if [[ "${1:-}" == --self-test ]]; then self_test; exit $?; fi
src="${1:?usage: check_layers.sh SRC_DIR | --self-test}"
if check_tree "$src"; then echo "layering ok: no upward include in $src"; else exit 1; fi
