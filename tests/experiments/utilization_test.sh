#!/usr/bin/env bash
# Runs scripts/experiments/utilization.sh (elastic vs gang on a fixed fake
# cluster) and checks what it reports: every job of both scenarios
# succeeded, the elastic scenario kept more of the cluster allocated than the
# gang one, the high-priority job waited less for its pods when the cluster
# was elastic, and the CSVs and the plot were written.
# Usage: utilization_test.sh BUILD_DIR
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$root/scripts/experiments/utilization.sh" --build "$build" --out "$out" > "$out.log" 2>&1 || {
  cat "$out.log"; echo "FAIL: utilization.sh exited non-zero"; exit 1; }
cat "$out/summary.txt"
fail() { echo "FAIL: $*"; exit 1; }
for f in utilization.csv jobs.csv summary.txt utilization.png; do
  [[ -s $out/$f ]] || fail "$f missing or empty"
done
[[ $(head -c 4 "$out/utilization.png" | od -An -c | tr -d ' ') == "211PNG" ]] || fail "utilization.png is not a PNG"
# Four jobs, all with exit code 0.
[[ $(awk -F, 'NR > 1 && $8 == 0' "$out/jobs.csv" | wc -l) == 4 ]] || fail "a job failed: $(cat "$out/jobs.csv")"
util() { sed -n "s/^$1: mean CPU utilization \([0-9.]*\)%.*/\1/p" "$out/summary.txt"; }
pending() { awk -F, -v m="$1" '$1 == m && $2 == "high" { print $5 }' "$out/jobs.csv"; }
e=$(util elastic); g=$(util gang)
[[ -n $e && -n $g ]] || fail "summary.txt lacks the utilizations"
awk -v e="$e" -v g="$g" 'BEGIN { exit !(e > g) }' || fail "elastic utilization $e% is not above gang $g%"
awk -v e="$(pending elastic)" -v g="$(pending gang)" 'BEGIN { exit !(e < g) }' ||
  fail "the high-priority job waited $(pending elastic) s (elastic) vs $(pending gang) s (gang)"
echo "PASS: elastic $e% vs gang $g%; high job pending $(pending elastic) s vs $(pending gang) s"
