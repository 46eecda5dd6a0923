#!/usr/bin/env bash
# Configures and builds edl (Release, -O3 -march=x86-64-v3) into ${BUILD_DIR:-build}.
# Extra arguments go to ninja (e.g. a target name). Ends with a line saying
# how long the build took and, with ccache, how many compilations it served
# from the cache (a checkout at another path hits too: docs/architecture.md,
# Testing).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake_args=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release)

# ccache's counters: "hits misses" (direct + preprocessed hits).
ccache_counts() {
  command -v ccache >/dev/null 2>&1 || return 0
  ccache --print-stats 2>/dev/null | awk '
    $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hits += $2 }
    $1 == "cache_miss" { misses += $2 }
    END { print hits + 0, misses + 0 }'
}

start=$SECONDS
before=$(ccache_counts)
cmake "${cmake_args[@]}" >/dev/null
if [[ "${CI:-}" == "true" ]]; then
  # CI fails on any warning. Not through -Werror, which would change every
  # compile command, so that CI would never share ccache's objects with a
  # developer's build: the build's output is searched instead (ccache replays
  # a cached compilation's warnings, so a cached object cannot hide one).
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  status=0
  ninja -C "$BUILD_DIR" -j"$(nproc)" "$@" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
  ((status == 0)) || exit "$status"
  if grep -q "warning:" "$log"; then
    echo "build.sh: CI=true fails on warnings; the build warned:" >&2
    grep "warning:" "$log" | head -n 20 >&2
    exit 1
  fi
else
  ninja -C "$BUILD_DIR" -j"$(nproc)" "$@"
fi
after=$(ccache_counts)
summary="build.sh: built in $((SECONDS - start)) s"
if [[ -n $before && -n $after ]]; then
  read -r hits0 misses0 <<<"$before"
  read -r hits1 misses1 <<<"$after"
  summary+="; ccache: $((hits1 - hits0)) compilations from the cache, $((misses1 - misses0)) compiled"
fi
echo "$summary"
