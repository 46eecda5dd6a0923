#!/usr/bin/env bash
# Sets up everything and runs the whole test suite: Debian packages, the
# @tensorflow/tfjs package for the TF.js round-trip tests, a Release build,
# then every test through CTest. This is what .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
(cd tests/tfjs && npm ci --no-audit --no-fund --loglevel=error)
scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 900
