#!/usr/bin/env bash
# Benchmark: the cost of the distributed path on this machine. Trains the zoo
# MLP and CNN on Fashion-MNIST (batch 64, Adam) in one process
# (--distribution_strategy=Local) and as jobs on the local cluster (1 PS + 1
# worker, 2 PS + 2 workers), and prints two throughputs and their ratios to
# local: "wall", the samples over the wall clock of the whole command
# (start-up and shutdown included), and "train", the rate that the run itself
# reports for its training (local: the "final:" line; a job: the client's
# "training:" line), which leaves start-up out.
#
# Usage: [EPOCHS=1] [MODELS="mlp cnn"] [SETUPS="1 1,2 2"] [LOCAL_THREADS=2]
#        [JOB_FLAGS=...] [SKIP_BUILD=1] [DATA_DIR=...] scripts/bench/dist_vs_local.sh
#
# By default each PS and worker of a job gets edl's default --num_threads (a
# worker the machine's cores shared among the workers, a PS those shared
# among the PS and workers). On a machine with many cores, compare at the
# same threads in total, e.g. LOCAL_THREADS=2 JOB_FLAGS=--num_threads=1 for
# 1 PS + 1 worker. SKIP_BUILD=1 runs $BUILD_DIR/edl as it is (a machine
# without a compiler).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
[[ ${SKIP_BUILD:-} == 1 ]] || scripts/build.sh edl >/dev/null
EDL=$BUILD_DIR/edl
D=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
EPOCHS=${EPOCHS:-1}
LOCAL_THREADS=${LOCAL_THREADS:-2}
read -r -a job_flags <<<"${JOB_FLAGS:-}"
JOBS=$(mktemp -d)
trap 'rm -rf "$JOBS"' EXIT
N=$((60000 * EPOCHS))

now() { date +%s.%N; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}x')"; }
# The rate after "in <seconds> s, " on the line a run ends with.
train_rate() { grep -oE '(samples|records) in [0-9.]+ s, [0-9]+ (samples|records)/s' "$1" |
  tail -1 | grep -oE '[0-9]+ (samples|records)/s' | grep -oE '^[0-9]+' || echo 0; }
run() {  # label, then edl train flags; prints the label, wall rate and train rate
  local label=$1 t0 log="$JOBS/log"
  shift
  t0=$(now)
  if ! "$EDL" train "$@" >"$log" 2>&1; then
    echo "$label: edl train failed:" >&2
    tail -5 "$log" >&2
    exit 1
  fi
  echo "$label $(python3 -c "print(round($N / ($(now) - $t0)))") $(train_rate "$log")"
}
echo "# nproc=$(nproc) loadavg=$(cut -d' ' -f1-3 /proc/loadavg) epochs=$EPOCHS" \
  "local threads=$LOCAL_THREADS job flags=${JOB_FLAGS:-(defaults)}"
printf "%-5s %-20s %10s %8s %10s %8s\n" model setup "wall/s" "vs local" "train/s" "vs local"
for model in ${MODELS:-mlp cnn}; do
  common=(--model_def="zoo:fashion_mnist_$model" --training_data="$D/train-images-idx3-ubyte.gz"
          --num_epochs="$EPOCHS" --minibatch_size=64)
  out=$(run local --distribution_strategy=Local --num_threads="$LOCAL_THREADS" "${common[@]}")
  read -r _ local_wall local_train <<<"$out"
  printf "%-5s %-20s %10d %8s %10d %8s\n" "$model" "local (1 process)" "$local_wall" 1.00x \
    "$local_train" 1.00x
  IFS=, read -r -a setups <<<"${SETUPS:-1 1,2 2}"
  for setup in "${setups[@]}"; do
    read -r ps workers <<<"$setup"
    out=$(run job --job_name="bench-$model-$ps-$workers" --jobs_dir="$JOBS" \
      --num_ps_pods="$ps" --num_workers="$workers" "${job_flags[@]}" "${common[@]}")
    read -r _ wall train <<<"$out"
    printf "%-5s %-20s %10d %8s %10d %8s\n" "$model" "$ps PS + $workers worker(s)" "$wall" \
      "$(ratio "$wall" "$local_wall")" "$train" "$(ratio "$train" "$local_train")"
  done
done
