#!/usr/bin/env bash
# Runs scripts/experiments/utilization.sh (elastic vs gang admission, emulated
# by a wait loop, on a fixed fake cluster) and checks what it reports: every
# job of both scenarios succeeded, the elastic scenario kept more of the fake's
# counted CPUs allocated than the gang one, the high-priority job waited less
# for its pods when the cluster was elastic, every job's wait, completion and
# records trained per second are present and sane (completion >= wait, rates
# > 0, every record of every epoch trained), and the CSVs and the plot were
# written. No threshold on the times or rates themselves: they depend on the
# machine.
# Usage: utilization_test.sh BUILD_DIR
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out" "$out.log"' EXIT
"$root/scripts/experiments/utilization.sh" --build "$build" --out "$out" > "$out.log" 2>&1 || {
  cat "$out.log"; echo "FAIL: utilization.sh exited non-zero"; exit 1; }
cat "$out/summary.txt"
fail() { echo "FAIL: $*"; exit 1; }
for f in utilization.csv jobs.csv incidents.csv summary.txt utilization.png; do
  [[ -s $out/$f ]] || fail "$f missing or empty"
done
[[ $(head -c 4 "$out/utilization.png" | od -An -c | tr -d ' ') == "211PNG" ]] || fail "utilization.png is not a PNG"
want=scenario,job,arrival_s,submit_s,pending_s,wait_s,end_s,completion_s,run_s,records_trained,records_per_s,exit_code
[[ $(head -n 1 "$out/jobs.csv") == "$want" ]] || fail "jobs.csv header is $(head -n 1 "$out/jobs.csv"), not $want"
# col SCENARIO JOB COLUMN -> that job's value, by the header's name
col() {
  awk -F, -v m="$1" -v j="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
    $1 == m && $2 == j { print $k[c] }' "$out/jobs.csv"
}
# Four jobs, all with exit code 0.
[[ $(awk -F, 'NR > 1 && $NF == 0' "$out/jobs.csv" | wc -l) == 4 ]] || fail "a job failed: $(cat "$out/jobs.csv")"
num() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
for m in elastic gang; do
  for j in low high; do
    epochs=$([[ $j == low ]] && echo 3 || echo 1)
    w=$(col $m $j wait_s); c=$(col $m $j completion_s); r=$(col $m $j run_s)
    p=$(col $m $j pending_s); n=$(col $m $j records_trained); rate=$(col $m $j records_per_s)
    for v in "$w" "$c" "$r" "$p" "$n" "$rate"; do
      num "$v" || fail "$m/$j: a missing or non-numeric value in $(grep "^$m,$j," "$out/jobs.csv")"
    done
    ge "$w" 0 || fail "$m/$j: negative wait $w s"
    ge "$r" "$w" || fail "$m/$j: run time $r s shorter than the wait for its pods $w s"
    ge "$c" "$r" || fail "$m/$j: completion $c s (from arrival) shorter than run time $r s (from submission)"
    ge "$c" "$p" || fail "$m/$j: completion $c s shorter than pending $p s"
    # The master's final report (in the job's log): one line per epoch, and records_trained
    # is every record of every epoch.
    report=$(grep -E "epoch [0-9]+: [0-9]+/[0-9]+ records trained" "$out/$m/$j.log" |
      sed -E 's/.*epoch ([0-9]+): [0-9]+\/([0-9]+) records trained.*/\1 \2/' | sort -u || true)
    [[ $(grep -c . <<< "$report" || true) == "$epochs" ]] || fail "$m/$j: the final report has not $epochs epochs: $report"
    total=$(awk '{ s += $2 } END { print s + 0 }' <<< "$report")
    [[ $n -gt 0 && $n == "$total" ]] || fail "$m/$j: $n records trained, not the $total of its $epochs epoch(s)"
    awk -v x="$rate" 'BEGIN { exit !(x > 0) }' || fail "$m/$j: records_per_s $rate is not positive"
  done
done
util() { sed -n "s/^$1: mean CPU utilization \([0-9.]*\)%.*/\1/p" "$out/summary.txt"; }
e=$(util elastic); g=$(util gang)
[[ -n $e && -n $g ]] || fail "summary.txt lacks the utilizations"
for m in elastic gang; do
  grep -qE "^$m: [0-9]+ records trained by both jobs in [0-9]+ s \([0-9]+ records/s\)" "$out/summary.txt" ||
    fail "summary.txt lacks the records trained per second of $m"
done
awk -v e="$e" -v g="$g" 'BEGIN { exit !(e > g) }' || fail "elastic utilization $e% is not above gang $g%"
# Incidents: the elastic scenario's low job lost the workers that high preempted, and its
# master's incident table placed each within the run, with the loss seen within seconds.
iwant=scenario,job,time_s,worker,detection_s,to_request_s,pending_s,to_step_s,tasks_put_back,records_put_back,cause
[[ $(head -n 1 "$out/incidents.csv") == "$iwant" ]] || fail "incidents.csv header is $(head -n 1 "$out/incidents.csv")"
lost=$(awk -F, '$1 == "elastic" && $2 == "low"' "$out/incidents.csv" | wc -l)
[[ $lost -ge 1 ]] || fail "the elastic low job shows no incident: $(cat "$out/incidents.csv")"
makespan=$(awk -F, '$1 == "elastic" { if ($7 > x) x = $7 } END { print x }' "$out/jobs.csv")
awk -F, -v end="$makespan" 'NR > 1 && $1 == "elastic" {
    if (!($3 >= 0 && $3 <= end)) { print "incident at " $3 " s outside the run (0.." end ")"; bad = 1 }
    if (!($5 >= 0 && $5 < 10)) { print "detection " $5 " s"; bad = 1 }
  } END { exit bad }' "$out/incidents.csv" || fail "incidents.csv: $(cat "$out/incidents.csv")"
grep -qE "^elastic/low: $lost incident\(s\)" "$out/summary.txt" || fail "summary.txt lacks elastic/low's incidents"
# The preempted workers' replacements waited for capacity, in the fake scheduler's words.
grep -q "^elastic,low,.*replacement pending: .*Insufficient cpu" "$out/incidents.csv" ||
  fail "no elastic/low incident names why its replacement waited: $(cat "$out/incidents.csv")"
awk -v e="$(col elastic high pending_s)" -v g="$(col gang high pending_s)" 'BEGIN { exit !(e < g) }' ||
  fail "the high-priority job waited $(col elastic high pending_s) s (elastic) vs $(col gang high pending_s) s (gang)"
echo "PASS: elastic $e% vs gang $g%; high job pending $(col elastic high pending_s) s vs $(col gang high pending_s) s," \
  "all pods bound $(col elastic high wait_s) s vs $(col gang high wait_s) s after submission," \
  "done $(col elastic high completion_s) s vs $(col gang high completion_s) s after arrival;" \
  "records/s high $(col elastic high records_per_s) vs $(col gang high records_per_s)," \
  "low $(col elastic low records_per_s) vs $(col gang low records_per_s)"
