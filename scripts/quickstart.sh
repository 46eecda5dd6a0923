#!/usr/bin/env bash
# Sets up edl and runs the main job: the zoo CNN on Fashion-MNIST (Debian's
# dataset-fashion-mnist), 3 epochs on the embedded local cluster with 2
# parameter servers and 2 workers. After 1,000 steps one worker is killed
# with SIGKILL, as a preemption would; the master relaunches it and the job
# goes on. It ends with the test accuracy and the data ledger (every record
# of every epoch trained, none lost), and the model exported to
# ./fashion_mnist_model (TF.js model.json + weights.bin + edl checkpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh edl
EDL=./build/edl
D=/usr/share/datasets/fashion-mnist
JOB=fashion_mnist
rm -rf fashion_mnist_checkpoints  # a fresh job: the PS would resume from old ones

$EDL train --job_name=$JOB --model_def=zoo:fashion_mnist_cnn \
  --training_data=$D/train-images-idx3-ubyte.gz \
  --validation_data=$D/t10k-images-idx3-ubyte.gz \
  --num_ps_pods=2 --num_workers=2 --num_epochs=3 \
  --checkpoint_dir=fashion_mnist_checkpoints --checkpoint_steps=500 --keep_checkpoint_max=2 \
  --output=fashion_mnist_model "$@" &
job=$!

# Wait for 1,000 model versions, then kill worker-0 the hard way.
status_field() {  # status_field EXPR: evaluates EXPR on the job's status JSON
  $EDL status $JOB 2>/dev/null | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)" \
    2>/dev/null || true
}
while kill -0 $job 2>/dev/null; do
  version=$(status_field 's["model_version"]')
  if [[ -n "$version" && "$version" -ge 1000 ]]; then
    pid=$(status_field '[w["pid"] for w in s["workers"] if w["name"] == "worker-0"][0]')
    if [[ -n "$pid" ]]; then
      echo "quickstart: killing worker-0 (pid $pid) with SIGKILL at model version $version" >&2
      kill -9 "$pid"
    fi
    break
  fi
  sleep 2
done
wait $job
