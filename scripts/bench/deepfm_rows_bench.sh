#!/usr/bin/env bash
# Builds edl and edl_deepfm_rows_bench (Release, via scripts/build.sh) and
# runs the bench on zoo:criteo_deepfm with its embedding tables widened to
# ROWS rows (default 10 million): the embedding rows one worker pulls and
# pushes per second through 2 PS over loopback RPC. Extra arguments go to
# the benchmark, e.g. scripts/bench/deepfm_rows_bench.sh --steps=100
#
# The worker's client and both PS share this one process, so the OpenMP
# threads the worker's gathers and sums wake would, with libgomp's default
# spin, keep a core busy that the PS need; the PS and workers of a job on
# the local cluster run with GOMP_SPINCOUNT=1000, and so does this bench
# (unless GOMP_SPINCOUNT or OMP_WAIT_POLICY is set already).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${GOMP_SPINCOUNT:-}" ] && [ -z "${OMP_WAIT_POLICY:-}" ]; then
  export GOMP_SPINCOUNT=1000
fi
BUILD_DIR=${BUILD_DIR:-build}
ROWS=${ROWS:-10000000}
BUILD_DIR="$BUILD_DIR" scripts/build.sh edl edl_deepfm_rows_bench >/dev/null
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BUILD_DIR/edl" zoo show criteo_deepfm > "$TMP/deepfm.json"
/usr/bin/python3 - "$TMP/deepfm.json" "$ROWS" <<'PY'
import json, sys
path, rows = sys.argv[1], int(sys.argv[2])
m = json.load(open(path))
for layer in m["model"]["config"]["layers"]:
    if layer["class_name"] == "Embedding":
        layer["config"]["input_dim"] = rows
json.dump(m, open(path, "w"))
PY
echo "# nproc=$(nproc) loadavg=$(cut -d' ' -f1-3 /proc/loadavg) GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-unset}"
exec "$BUILD_DIR/bench/edl_deepfm_rows_bench" --model_def="$TMP/deepfm.json" "$@"
