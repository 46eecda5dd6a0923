#!/usr/bin/env bash
# Configures and builds edl (Release, -O3 -march=x86-64-v3) into ${BUILD_DIR:-build}.
# Extra arguments go to ninja (e.g. a target name).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake_args=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release)
if [[ "${CI:-}" == "true" ]]; then cmake_args+=(-DEDL_WERROR=ON); fi
cmake "${cmake_args[@]}" >/dev/null
ninja -C "$BUILD_DIR" -j"$(nproc)" "$@"
