#!/usr/bin/env bash
# Benchmark: the cost of the distributed path on this machine. Trains the zoo
# MLP and CNN for one epoch of Fashion-MNIST (batch 64, Adam) in one process
# (--distribution_strategy=Local, 2 threads) and as jobs on the local cluster
# (1 PS + 1 worker, 2 PS + 2 workers; each process gets the default
# --num_threads: a worker the machine's cores shared among the workers, a PS
# those shared among the PS and workers), and prints wall-clock training
# throughput and the ratio to local.
#
# Usage: scripts/bench/dist_vs_local.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/build.sh edl >/dev/null
EDL=./$BUILD_DIR/edl
D=/usr/share/datasets/fashion-mnist
JOBS=$(mktemp -d)
trap 'rm -rf "$JOBS"' EXIT
N=60000

now() { date +%s.%N; }
printf "%-5s %-22s %12s %10s\n" model setup "samples/s" "vs local"
for model in mlp cnn; do
  common=(--model_def=zoo:fashion_mnist_$model --training_data=$D/train-images-idx3-ubyte.gz
          --num_epochs=1 --minibatch_size=64 --log_level=WARNING)
  t0=$(now)
  $EDL train --distribution_strategy=Local --num_threads=2 "${common[@]}" >/dev/null 2>&1
  local_rate=$(python3 -c "print($N / ($(now) - $t0))")
  printf "%-5s %-22s %12.0f %9.2fx\n" $model "local (1 process)" "$local_rate" 1
  for setup in "1 1" "2 2"; do
    set -- $setup
    t0=$(now)
    $EDL train --job_name=bench-$model-$1-$2 --jobs_dir=$JOBS --num_ps_pods=$1 --num_workers=$2 \
      "${common[@]}" >/dev/null 2>&1
    rate=$(python3 -c "print($N / ($(now) - $t0))")
    printf "%-5s %-22s %12.0f %9.2fx\n" $model "$1 PS + $2 worker(s)" "$rate" \
      "$(python3 -c "print($rate / $local_rate)")"
  done
done
echo "(wall clock of the whole command, start-up and shutdown included; 2 cores)"
