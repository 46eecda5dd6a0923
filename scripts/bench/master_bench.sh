#!/usr/bin/env bash
# Benchmark: the master's core in-process (bench/master_bench.cc): task
# dispatch rate with 1,000 simulated workers over 1,000,000 tasks (1 and 2
# calling threads), memory per million tasks, and recovery time after a
# worker's exit and after missed heartbeats (heartbeat_timeout 2 s), the same
# dispatch with the master's journal on (every answer once durable: tasks/s,
# journal bytes and fsyncs per task), and the journal's durable appends from
# 1 to 512 threads (JOURNAL_DIR: where, default ./journal_bench.tmp; measure
# on the disk a job would use, not tmpfs).
#
# Usage: scripts/bench/master_bench.sh [TASKS=1000000] [WORKERS=1000]
set -euo pipefail
cd "$(dirname "$0")/../.."
TASKS=${1:-1000000}
WORKERS=${2:-1000}
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
scripts/build.sh edl_master_bench >/dev/null
BIN=$(find "$BUILD_DIR" -name edl_master_bench -type f -perm -u+x | head -n1)
if [[ -z "$BIN" ]]; then
  echo "master_bench.sh: edl_master_bench not found under $BUILD_DIR" >&2
  exit 1
fi
"$BIN" "$TASKS" "$WORKERS"
