#!/usr/bin/env bash
# Elastic versus gang admission on a fake cluster of fixed capacity.
#
# On a fake cluster (edl-fake-kube) of one node with 8 CPUs:
#   t=0   job "low"  (priority low workers): master 0.5 + 1 PS + 6 workers x 1 CPU = 7.5 CPUs,
#         the zoo CNN on Fashion-MNIST for --epochs_low (3) epochs
#   t=20s job "high" (priority high):         master 0.5 + 1 PS + 3 workers x 1 CPU = 4.5 CPUs,
#         the same model for --epochs_high (1) epoch
# elastic: both are edl jobs as they are: "high" preempts 4 of low's workers,
#          low goes on with 2, and grows back to 6 when "high" is done.
# gang:    emulated by a wait loop in this script, not by a gang scheduler:
#          "high" is submitted only once the fake's last sample shows 4.5 CPUs
#          free (all its pods fit), so nothing is preempted or shrunk.
# What is measured: every 0.5 s the fake sums the CPU requests of the pods
# bound to its node (not terminal) and divides by its counted 8 CPUs: CPU
# allocated to pods, not CPU consumed. Writes, under --out (default
# build/experiments/utilization):
#   utilization.csv   time_s,elastic,gang           (allocated CPU / counted CPUs)
#   jobs.csv          one line per job of each scenario:
#     scenario,job,arrival_s,submit_s   when it arrived / `edl train` was started (s from t=0)
#     pending_s       arrival -> 3 of its pods bound (master, PS, a first worker)
#     wait_s          submission -> all its pods (master, PS, every worker) bound at once
#     end_s           when `edl train` returned (its master pod Succeeded or Failed)
#     completion_s    arrival -> end;  run_s: submission -> end
#     records_trained records trained, summed over epochs, from the master's final
#                     report ("epoch N: T/R records trained, ...")
#     records_per_s   records_trained / run_s
#     exit_code       of `edl train`
#   incidents.csv     the workers each job lost and what each cost, from its
#                     master's incident table (docs/distributed.md):
#     scenario,job,time_s (when its master noticed, s from t=0),worker,
#     detection_s,to_request_s,pending_s,to_step_s,tasks_put_back,
#     records_put_back,cause     (a stage never reached: NA)
#   summary.txt       mean allocation of each scenario over its makespan, records
#                     trained per second by both jobs together, incidents per
#                     job, the jobs table
#   utilization.png   the two timelines (gnuplot), each incident a mark and a
#                     line until its replacement registered
# and each scenario's raw data and logs in elastic/ and gang/. Times from the
# fake's record (pending_s, wait_s) are as fine as its 0.5 s samples.
#
# The fake's CPUs are a number the scheduler counts, not real cores: every pod
# runs on this machine's cores, so the jobs' wall times and records/s depend
# on the machine; the allocation does not.
#
# Usage: scripts/experiments/utilization.sh [--build DIR] [--out DIR] [--epochs_low N] [--epochs_high N]
#                                           [--arrival SECONDS]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
out=""
epochs_low=3
epochs_high=1
arrival_high=20
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --epochs_low) epochs_low=$2; shift 2 ;;
    --epochs_high) epochs_high=$2; shift 2 ;;
    --arrival) arrival_high=$2; shift 2 ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "utilization.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-$build/experiments/utilization}
edl=$build/edl
fake=$build/edl-fake-kube
for f in "$edl" "$fake"; do
  [[ -x $f ]] || { echo "utilization.sh: $f not built (scripts/build.sh edl edl-fake-kube)" >&2; exit 1; }
done
command -v gnuplot >/dev/null || { echo "utilization.sh: gnuplot missing (scripts/install-deps.sh)" >&2; exit 1; }
data=${EDL_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
train=$data/train-images-idx3-ubyte.gz
[[ -f $train ]] || { echo "utilization.sh: $train missing (apt-get install dataset-fashion-mnist)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
capacity_cpu=8
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# job NAME WORKERS EPOCHS PRIORITY KUBECONFIG LOG -> runs the client in the foreground
job() {
  local name=$1 workers=$2 epochs=$3 priority=$4 kubeconfig=$5 log=$6
  "$edl" train --cluster=kube --kubeconfig="$kubeconfig" --image_name=edl:dev \
    --job_name="$name" --model_def=zoo:fashion_mnist_cnn --training_data="$train" \
    --num_epochs="$epochs" --num_ps_pods=1 --num_workers="$workers" \
    --master_resource_request=cpu=0.5,memory=1Gi --ps_resource_request=cpu=1,memory=2Gi \
    --worker_resource_request=cpu=1,memory=2Gi --master_pod_priority=high \
    --ps_pod_priority=high --worker_pod_priority="$priority" --termination_grace_period=10 \
    > "$log" 2>&1
}

# Free CPUs now, from the fake's last utilization sample.
free_cpu() {
  tail -n 1 "$1" | awk -F, -v cap=$capacity_cpu 'NR == 1 && $1 != "time_s" { printf "%.3f", cap - $3; exit } { print cap }'
}

scenario() {
  local mode=$1 dir=$out/$1
  mkdir -p "$dir"
  "$fake" --dir "$dir/cluster" --nodes "node-0:cpu=$capacity_cpu,memory=64Gi" \
    --image "edl:dev=$(dirname "$edl")" --priority_class high=100000 --priority_class low=1000 \
    --utilization_csv "$dir/utilization.csv" 2> "$dir/fake-kube.log" &
  local fake_pid=$!
  for _ in $(seq 1 300); do [[ -f $dir/cluster/kubeconfig ]] && break; sleep 0.1; done
  [[ -f $dir/cluster/kubeconfig ]] || { echo "utilization.sh: the fake cluster did not start" >&2; exit 1; }
  local kc=$dir/cluster/kubeconfig t0
  t0=$(now)
  echo "[$mode] t=0: job low arrives (6 workers, $epochs_low epochs)"
  ( rc=0; job low 6 "$epochs_low" low "$kc" "$dir/low.log" || rc=$?; echo $rc > "$dir/low.rc"; now > "$dir/low.end" ) &
  local low_pid=$!
  echo "0 0" > "$dir/low.times"
  sleep "$arrival_high"   # the scenario's arrival time, not a wait for a condition
  local arrival start
  arrival=$(elapsed "$t0" "$(now)")
  echo "[$mode] t=$arrival: job high arrives (3 workers, $epochs_high epochs)"
  if [[ $mode == gang ]]; then
    # Gang admission, emulated here (no gang scheduler runs): wait until the
    # whole job (4.5 CPUs) fits by the fake's last allocation sample.
    while awk -v f="$(free_cpu "$dir/utilization.csv")" 'BEGIN { exit !(f < 4.5) }'; do sleep 0.5; done
  fi
  start=$(elapsed "$t0" "$(now)")
  echo "[$mode] t=$start: job high submitted"
  echo "$arrival $start" > "$dir/high.times"
  ( rc=0; job high 3 "$epochs_high" high "$kc" "$dir/high.log" || rc=$?; echo $rc > "$dir/high.rc"; now > "$dir/high.end" ) &
  local high_pid=$!
  wait "$low_pid" "$high_pid"
  for j in low high; do
    read -r arrival start < "$dir/$j.times"
    local end workers
    end=$(elapsed "$t0" "$(cat "$dir/$j.end")")
    workers=$([[ $j == low ]] && echo 6 || echo 3)
    # From the fake's per-job record (time_s,job,allocated_cpu,running_pods,pending_pods;
    # running_pods counts the job's pods bound to the node):
    # pending: from arrival until 3 of its pods are bound (master, PS, a first worker);
    # wait: from submission until all its pods (master, PS, every worker) are bound at once.
    local first all
    first=$(awk -F, -v j=$j '$2 == j && $4 >= 3 { print $1; exit }' "$dir/utilization.jobs.csv")
    first=${first:-$end}
    all=$(awk -F, -v j=$j -v n=$((workers + 2)) -v s="$start" \
      '$2 == j && $4 >= n && $1 >= s { print $1; exit }' "$dir/utilization.jobs.csv")
    # Records trained: the master's final report, streamed into the client's log, has one
    # "epoch N: T/R records trained, ..." line per epoch (T counts each record once).
    local records
    records=$(sed -nE 's/.*epoch ([0-9]+): ([0-9]+)\/[0-9]+ records trained.*/\1 \2/p' "$dir/$j.log" |
      awk '{ t[$1] = $2 } END { for (e in t) s += t[e]; print s + 0 }')
    awk -v OFS=, -v m=$mode -v j=$j -v a="$arrival" -v s="$start" -v f="$first" -v all="$all" \
        -v e="$end" -v r="$records" -v rc="$(cat "$dir/$j.rc")" 'BEGIN {
      run = e - s
      wait = (all == "") ? "NA" : sprintf("%.1f", all - s)
      rate = (run > 0) ? sprintf("%.0f", r / run) : "NA"
      print m, j, a, s, sprintf("%.1f", f - a), wait, e, sprintf("%.1f", e - a), sprintf("%.1f", run), r, rate, rc
    }' >> "$out/jobs.csv"
    echo "[$mode] job $j: exit $(cat "$dir/$j.rc"), done at t=$end, $records records trained"
    # The master's incident table (at the end of its final report): "at" is the UTC
    # time of day it noticed the loss, placed here relative to t=0.
    sed -nE 's/^.*  (worker-[0-9]+) +([0-9]{2}):([0-9]{2}):([0-9.]+) +(([0-9.]+|-) +([0-9.]+|-) +([0-9.]+|-) +([0-9.]+|-) +[0-9]+\/[0-9]+  .*)$/\1 \2 \3 \4 \5/p' \
      "$dir/$j.log" | while read -r worker h m s det req pend step put_back cause; do
      local tasks=${put_back%/*} records=${put_back#*/}
      awk -v OFS=, -v m=$mode -v j=$j -v t0="$t0" -v h="$h" -v mi="$m" -v s="$s" -v w="$worker" \
          -v d="$det" -v q="$req" -v p="$pend" -v st="$step" -v tk="$tasks" -v r="$records" \
          -v c="${cause//,/;}" 'function na(x) { return x == "-" ? "NA" : x }
        BEGIN {
          at = h * 3600 + mi * 60 + s
          day0 = t0 - 86400 * int(t0 / 86400)
          t = at - day0; if (t < -43200) t += 86400
          print m, j, sprintf("%.1f", t), w, na(d), na(q), na(p), na(st), tk, r, c
        }' >> "$out/incidents.csv"
    done
  done
  kill -TERM "$fake_pid"
  wait "$fake_pid" || true
}

echo "scenario,job,arrival_s,submit_s,pending_s,wait_s,end_s,completion_s,run_s,records_trained,records_per_s,exit_code" > "$out/jobs.csv"
echo "scenario,job,time_s,worker,detection_s,to_request_s,pending_s,to_step_s,tasks_put_back,records_put_back,cause" > "$out/incidents.csv"
scenario elastic
scenario gang

# Per scenario: mean allocation over its makespan (until its last job ends) and
# the records both jobs trained per second of the makespan.
{
  for mode in elastic gang; do
    makespan=$(awk -F, -v m=$mode '$1 == m { if ($7 > x) x = $7 } END { print x }' "$out/jobs.csv")
    awk -F, -v m=$mode -v end="$makespan" 'NR > 1 && $1 <= end { s += $4; n++ }
      END { printf "%s: mean CPU utilization %.1f%% over %.0f s (%d samples)\n", m, 100 * s / n, end, n }' \
      "$out/$mode/utilization.csv"
  done
  for mode in elastic gang; do
    awk -F, -v m=$mode '$1 == m { r += $10; if ($7 > x) x = $7 }
      END { printf "%s: %d records trained by both jobs in %.0f s (%.0f records/s)\n", m, r, x, (x > 0) ? r / x : 0 }' \
      "$out/jobs.csv"
  done
  for mode in elastic gang; do
    for j in low high; do
      awk -F, -v m=$mode -v j=$j '$1 == m && $2 == j { n++; if ($7 != "NA") { p += $7; k++ } }
        END { printf "%s/%s: %d incident(s)", m, j, n; if (k) printf ", replacements pending %.1f s on average", p / k; print "" }' \
        "$out/incidents.csv"
    done
  done
  echo
  column -s, -t < "$out/jobs.csv"
} | tee "$out/summary.txt"

# One CSV with both timelines (sampled at the same 0.5 s period).
paste -d, <(cut -d, -f1,4 "$out/elastic/utilization.csv") <(cut -d, -f4 "$out/gang/utilization.csv") |
  awk -F, 'NR == 1 { print "time_s,elastic,gang"; next } NF == 3 && $3 != "" { print }' > "$out/utilization.csv"
# Per scenario: time, high's CPUs, high + low's CPUs (stacked areas).
for mode in elastic gang; do
  # time, mark height, seconds until the replacement registered (0: never)
  awk -F, -v m=$mode -v y=$capacity_cpu '$1 == m {
      span = ($6 == "NA" || $7 == "NA") ? 0 : $6 + $7
      print $3, y + 0.25, span
    }' "$out/incidents.csv" > "$out/$mode/incidents.dat"
  awk -F, 'NR > 1 { t[$1] = 1; c[$1, $2] = $3 }
    END { for (x in t) print x, c[x, "high"] + 0, c[x, "high"] + c[x, "low"] }' \
    "$out/$mode/utilization.jobs.csv" | sort -n > "$out/$mode/stacked.dat"
done
# A plot clause marking each incident of a scenario (none when it had none).
incident_marks() {
  [[ -s $out/$1/incidents.dat ]] || return 0
  printf ', "%s" using 1:2:3:(0) with vectors nohead lw 2 lc rgb "#e7298a" title "replacement pending"' \
    "$out/$1/incidents.dat"
  printf ', "%s" using 1:2 with points pt 11 ps 1.5 lc rgb "#e7298a" title "worker lost (incident)"' \
    "$out/$1/incidents.dat"
}
gnuplot <<PLOT
set terminal pngcairo size 1100,700 font ",10" noenhanced
set output "$out/utilization.png"
set multiplot layout 2,1 title "edl on a fixed 8-CPU cluster: job low (6 workers) at t=0, job high (3 workers, higher priority) at t=${arrival_high}s"
set xlabel "time (s)"
set ylabel "allocated CPUs (requests of bound pods)"
set yrange [0:$capacity_cpu.5]
set key outside right
set style fill solid 0.5 noborder
set title "elastic: $(grep '^elastic: mean' "$out/summary.txt" | cut -d: -f2-)"
plot "$out/elastic/stacked.dat" using 1:2 with filledcurves x1 lc rgb "#d95f02" title "high", \
     "" using 1:2:3 with filledcurves lc rgb "#7570b3" title "low", \
     $capacity_cpu with lines dt 2 lc rgb "black" title "capacity"$(incident_marks elastic)
set title "gang (emulated: submitted once all its pods fit): $(grep '^gang: mean' "$out/summary.txt" | cut -d: -f2-)"
plot "$out/gang/stacked.dat" using 1:2 with filledcurves x1 lc rgb "#d95f02" title "high", \
     "" using 1:2:3 with filledcurves lc rgb "#7570b3" title "low", \
     $capacity_cpu with lines dt 2 lc rgb "black" title "capacity"$(incident_marks gang)
unset multiplot
PLOT
echo "utilization.sh: wrote $out/{utilization.csv,jobs.csv,incidents.csv,summary.txt,utilization.png}"
