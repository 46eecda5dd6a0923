#!/usr/bin/env bash
# Benchmark: edl's ring allreduce (net/collective/collective.h, bench/allreduce_bench.cc)
# against OpenMPI's MPI_Allreduce (bench/mpi_allreduce_bench.cc) on one
# machine, float32 sum, in place, sizes 4 KiB .. 64 MiB (powers of 4), N = 2 3
# 4 ranks as separate processes. Prints bus bandwidth (2(N-1)/N * bytes /
# time, GB = 1e9 bytes) of edl over its same-host shared-memory links
# ("edl_shm", the default), of edl over TCP loopback (`--no_shm`, "edl_tcp"),
# of MPI with its default transports (shared memory on one machine,
# "mpi_shm") and of MPI restricted to TCP (`--mca btl tcp,self`, "mpi_tcp"),
# then the ratios: edl_shm and edl_tcp, each against mpi_shm and mpi_tcp.
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
  "$EDL_BENCH" --ranks "$n" --no_shm >"$OUT/edltcp.$n"
  "${MPIRUN[@]}" -np "$n" "$MPI_BENCH" >"$OUT/mpi.$n"
  "${MPIRUN[@]}" --mca btl tcp,self -np "$n" "$MPI_BENCH" >"$OUT/tcp.$n"
done

echo "allreduce bus bandwidth, GB/s ($(nproc) cores; $(date -u +%F))"
echo "ratios: edl_shm or edl_tcp divided by mpi_shm or mpi_tcp"
printf '%10s %3s %8s %8s %8s %8s %9s %9s %9s %9s\n' bytes N edl_shm \
  edl_tcp mpi_shm mpi_tcp shm/mshm shm/mtcp tcp/mshm tcp/mtcp
for n in $RANKS; do
  # Fields after the joins: 1 bytes, then per file ranks iters sec busbw.
  join "$OUT/edl.$n" "$OUT/edltcp.$n" | join - "$OUT/mpi.$n" |
    join - "$OUT/tcp.$n" |
    awk '{printf "%10d %3d %8.3f %8.3f %8.3f %8.3f %8.2fx %8.2fx %8.2fx %8.2fx\n",
          $1, $2, $5, $9, $13, $17, $5/$13, $5/$17, $9/$13, $9/$17}'
done
