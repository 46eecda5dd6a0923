#!/usr/bin/env bash
# Builds edl_ps_bench (Release, via scripts/build.sh) and runs it: raw
# loopback TCP vs parameter-server dense push/pull and embedding rows over
# RpcServer + RemotePs. Extra arguments go to the benchmark, e.g.
#   scripts/bench/ps_bench.sh --dense_n=2048 --reps=10
# Needs add_subdirectory(bench) in the top-level CMakeLists.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_DIR="$BUILD_DIR" scripts/build.sh edl_ps_bench
echo "# nproc=$(nproc) loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $BUILD_DIR/bench/edl_ps_bench $*"
exec "$BUILD_DIR/bench/edl_ps_bench" "$@"
