#!/usr/bin/env bash
# Benchmark: record index building and decoding rates per core for CSV and
# TFRecord, plain and gzip (bench/data_index_bench.cc), on generated
# Criteo-shaped rows of about SIZE_MB of data per file.
# Usage: scripts/bench/data_index_bench.sh [SIZE_MB=512] [DIR=/tmp]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh edl_data_index_bench >/dev/null
"./${BUILD_DIR:-build}/bench/edl_data_index_bench" "${1:-512}" "${2:-/tmp}"
