#!/usr/bin/env bash
# Installs a built cuplan tree into a temporary prefix, then configures, builds and runs the consumer project next
# to this script against that prefix with find_package(cuplan). Proves the installed package is complete.
#
#   bash tests/package/check_package.sh [BUILD_DIR]    (default: build)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build_dir="$(cd "${1:-$here/../../build}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/cuplan-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

echo "== installing $build_dir into $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix"

echo "== configuring the consumer"
cmake -S "$here" -B "$work/consumer" "${generator[@]}" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release

echo "== building the consumer"
cmake --build "$work/consumer"

echo "== running the consumer"
"$work/consumer/cuplan_consumer"
