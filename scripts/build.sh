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
if [[ "${CI:-}" == "true" ]]; then cmake_args+=(-DEDL_WERROR=ON); fi

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
ninja -C "$BUILD_DIR" -j"$(nproc)" "$@"
after=$(ccache_counts)
summary="build.sh: built in $((SECONDS - start)) s"
if [[ -n $before && -n $after ]]; then
  read -r hits0 misses0 <<<"$before"
  read -r hits1 misses1 <<<"$after"
  summary+="; ccache: $((hits1 - hits0)) compilations from the cache, $((misses1 - misses0)) compiled"
fi
echo "$summary"
