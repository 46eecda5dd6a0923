#!/usr/bin/env bash
# Benchmark: edl's ring allreduce (net/collective.h, bench/allreduce_bench.cc)
# against OpenMPI's MPI_Allreduce (bench/mpi_allreduce_bench.cc) on loopback,
# float32 sum, in place, sizes 4 KiB .. 64 MiB (powers of 4), N = 2 3 4 ranks
# as separate processes. Prints bus bandwidth (2(N-1)/N * bytes / time, GB =
# 1e9 bytes) of edl, of MPI with its default transports (shared memory on one
# machine) and of MPI restricted to TCP (`--mca btl tcp,self`, the same
# transport as edl), and the ratios.
#
# Usage: BUILD_DIR=build scripts/bench/allreduce_bench.sh [RANKS="2 3 4"]
# Builds nothing: build edl_allreduce_bench and mpi_allreduce_bench first.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
RANKS=${1:-"2 3 4"}
EDL_BENCH=$BUILD_DIR/bench/edl_allreduce_bench
MPI_BENCH=$BUILD_DIR/bench/mpi_allreduce_bench
for b in "$EDL_BENCH" "$MPI_BENCH"; do
  [[ -x $b ]] || { echo "allreduce_bench.sh: $b not built" >&2; exit 1; }
done
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

for n in $RANKS; do
  "$EDL_BENCH" --ranks "$n" >"$OUT/edl.$n"
  "${MPIRUN[@]}" -np "$n" "$MPI_BENCH" >"$OUT/mpi.$n"
  "${MPIRUN[@]}" --mca btl tcp,self -np "$n" "$MPI_BENCH" >"$OUT/tcp.$n"
done

echo "allreduce bus bandwidth, GB/s ($(nproc) cores; $(date -u +%F))"
printf '%10s %3s %9s %9s %9s %9s %9s\n' bytes N edl mpi_shm mpi_tcp \
  edl/shm edl/tcp
for n in $RANKS; do
  join "$OUT/edl.$n" "$OUT/mpi.$n" | join - "$OUT/tcp.$n" |
    awk '{printf "%10d %3d %9.3f %9.3f %9.3f %8.2fx %8.2fx\n",
          $1, $2, $5, $9, $13, $5/$9, $5/$13}'
done
