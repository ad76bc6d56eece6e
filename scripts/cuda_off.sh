# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/setup.sh and scripts/sanitize_cpu.sh: how a CPU-only build is asked for, and the rule that it
# must not find any CUDA tool while it configures, builds and runs.

# True (status 0) when $1 is one of the ways to say OFF (OFF, off, 0, FALSE, false, NO, no).
cuplan_is_off() {
  case "$1" in
    OFF | off | 0 | FALSE | false | NO | no) return 0 ;;
  esac
  return 1
}

# Takes every directory with "cuda" in its name off PATH (and exports it).
cuplan_hide_cuda() {
  PATH="$(tr ':' '\n' <<<"$PATH" | grep -v -i cuda | paste -sd: -)"
  export PATH
}
