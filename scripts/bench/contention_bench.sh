#!/usr/bin/env bash
# Benchmark: training on cores that other processes share. Trains the zoo MLP
# on Fashion-MNIST (batch 64) in each mode: one process
# (--distribution_strategy=Local), a job of 1 PS + 1 worker and an allreduce
# job of 2 workers on the local cluster, in three settings:
#   idle     nothing else runs
#   busy     beside BUSY (default 2) processes that spin on the CPU
#   cgroup   in a cgroup whose CPU quota is QUOTA cores (default 1.5; cgroup v1
#            cpu.cfs_quota_us or v2 cpu.max; needs root)
# and for each, edl as it is against edl with libgomp's default spin count
# (GOMP_SPINCOUNT=300000) and a fixed team (--adapt_threads=false), i.e. edl
# before it handled shared cores. It prints each run's own training rate (the
# run's "samples/records in S s, R/s" line), the slowdown against the same
# mode idle, and the ratio of the two builds' rates.
#
# Usage: [EPOCHS=1] [MODES="local ps allreduce"] [SETTINGS="idle busy cgroup"]
#        [BUSY=2] [QUOTA=1.5] [SKIP_BUILD=1] [DATA_DIR=...] scripts/bench/contention_bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
[[ ${SKIP_BUILD:-} == 1 ]] || scripts/build.sh edl >/dev/null
EDL=$(realpath "$BUILD_DIR/edl")
D=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
EPOCHS=${EPOCHS:-1}
BUSY=${BUSY:-2}
QUOTA=${QUOTA:-1.5}
TMP=$(mktemp -d)
CGROUP=""
busy_pids=()
cleanup() {
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ -n $CGROUP ]]; then rmdir "$CGROUP" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# The rate after "in <seconds> s, " on the line a run ends with.
train_rate() { grep -oE '(samples|records) in [0-9.]+ s, [0-9]+ (samples|records)/s' "$1" |
  tail -1 | grep -oE '[0-9]+ (samples|records)/s' | grep -oE '^[0-9]+' || echo 0; }

mode_flags() {
  local common=(--model_def=zoo:fashion_mnist_mlp --training_data="$D/train-images-idx3-ubyte.gz"
                --num_epochs="$EPOCHS" --minibatch_size=64 --jobs_dir="$TMP/jobs")
  case $1 in
    local) echo "--distribution_strategy=Local ${common[*]}" ;;
    ps) echo "--num_ps_pods=1 --num_workers=1 ${common[*]}" ;;
    allreduce) echo "--distribution_strategy=AllreduceStrategy --num_workers=2 ${common[*]}" ;;
    *) echo "unknown mode $1" >&2; exit 2 ;;
  esac
}

make_cgroup() {
  local quota_us
  quota_us=$(python3 -c "print(int($QUOTA * 100000))")
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then  # v2
    CGROUP=/sys/fs/cgroup/edl-contention-$$
    mkdir "$CGROUP"
    echo "$quota_us 100000" >"$CGROUP/cpu.max"
  elif [[ -d /sys/fs/cgroup/cpu ]]; then  # v1
    CGROUP=/sys/fs/cgroup/cpu/edl-contention-$$
    mkdir "$CGROUP"
    echo 100000 >"$CGROUP/cpu.cfs_period_us"
    echo "$quota_us" >"$CGROUP/cpu.cfs_quota_us"
  else
    echo "no cgroup cpu controller here" >&2
    return 1
  fi
}

# run SETTING BUILD MODE: prints the training rate.
run() {
  local setting=$1 build=$2 mode=$3 log="$TMP/log" env=() flags
  read -r -a flags <<<"$(mode_flags "$mode")"
  if [[ $build == before ]]; then
    env=(GOMP_SPINCOUNT=300000)
    flags+=(--adapt_threads=false)
  fi
  local cmd=(env "${env[@]}" "$EDL" train "${flags[@]}")
  if [[ $setting == cgroup ]]; then
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CGROUP" "${cmd[@]}" >"$log" 2>&1 ||
      { echo "$mode $setting $build failed:" >&2; tail -5 "$log" >&2; exit 1; }
  else
    "${cmd[@]}" >"$log" 2>&1 || { echo "$mode $setting $build failed:" >&2; tail -5 "$log" >&2; exit 1; }
  fi
  train_rate "$log"
  grep -o 'CPU cores were shared: .*' "$log" | head -1 >"$TMP/shared" || true
}

settings=(${SETTINGS:-idle busy cgroup})
for s in "${settings[@]}"; do
  if [[ $s == cgroup ]]; then make_cgroup; fi
done
echo "# nproc=$(nproc) loadavg=$(cut -d' ' -f1-3 /proc/loadavg) epochs=$EPOCHS busy=$BUSY quota=$QUOTA" \
  "edl=$("$EDL" version | head -1)"
printf "%-9s %-7s %10s %8s %12s %8s %9s  %s\n" mode setting "edl r/s" "vs idle" "before r/s" \
  "vs idle" "edl/before" "team"
for mode in ${MODES:-local ps allreduce}; do
  idle_now=0 idle_before=0
  for s in "${settings[@]}"; do
    if [[ $s == busy ]]; then
      for _ in $(seq "$BUSY"); do
        sh -c 'while :; do :; done' &
        busy_pids+=($!)
      done
    fi
    now=$(run "$s" now "$mode")
    team=$(cat "$TMP/shared")
    before=$(run "$s" before "$mode")
    if [[ $s == busy ]]; then
      for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
      wait "${busy_pids[@]}" 2>/dev/null || true
      busy_pids=()
    fi
    if [[ $s == idle ]]; then idle_now=$now idle_before=$before; fi
    python3 - "$mode" "$s" "$now" "$idle_now" "$before" "$idle_before" "$team" <<'EOF'
import sys
mode, s, now, idle_now, before, idle_before, team = sys.argv[1:]
now, idle_now, before, idle_before = map(float, (now, idle_now, before, idle_before))
slow = lambda r, i: f"{i / r:.2f}x" if r and i else "-"
print(f"{mode:<9} {s:<7} {now:>10.0f} {slow(now, idle_now):>8} {before:>12.0f} "
      f"{slow(before, idle_before):>8} {now / before if before else 0:>9.2f}  {team}")
EOF
  done
done
