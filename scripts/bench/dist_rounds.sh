#!/usr/bin/env bash
# Benchmark: local training against distributed jobs on the local cluster,
# in alternating rounds so that the machine's drift hits every setup alike.
# Each round trains the zoo MLP (5 epochs) and CNN (1 epoch) of Fashion-MNIST
# (batch 64): locally with 2 threads, then 1 PS + 1 worker and 2 PS + 2
# workers, each once with --num_threads=1 for every process ("one thread
# each") and once with the default thread counts ("default"). Prints one line
# per run: "<model> <setup> <seconds of wall clock, start-up included>".
#
# Usage: scripts/bench/dist_rounds.sh [ROUNDS=3]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
ROUNDS=${1:-3}
scripts/build.sh edl >/dev/null
EDL=./$BUILD_DIR/edl
D=/usr/share/datasets/fashion-mnist
JOBS=$(mktemp -d)
trap 'rm -rf "$JOBS"' EXIT
now() { date +%s.%N; }
run() {  # label, then edl train flags
  local label=$1 t0
  shift
  t0=$(now)
  $EDL train "$@" --training_data=$D/train-images-idx3-ubyte.gz --minibatch_size=64 \
    --log_level=WARNING >/dev/null 2>&1
  echo "$label $(python3 -c "print(round($(now) - $t0, 3))")"
}
for round in $(seq "$ROUNDS"); do
  for model in mlp cnn; do
    epochs=1
    [[ $model == mlp ]] && epochs=5
    common=(--model_def=zoo:fashion_mnist_$model --num_epochs=$epochs)
    run "$model local" --distribution_strategy=Local --num_threads=2 "${common[@]}"
    for setup in "1 1" "2 2"; do
      set -- $setup
      job=(--jobs_dir="$JOBS" --num_ps_pods=$1 --num_workers=$2 "${common[@]}")
      run "$model $1+$2 one-thread-each" --job_name=$model-a$round-$1 --num_threads=1 "${job[@]}"
      run "$model $1+$2 default" --job_name=$model-b$round-$1 "${job[@]}"
    done
  done
done
