#!/usr/bin/env bash
# Training throughput of edl against PyTorch on the same device in one run
# (issues 6 and 17): the zoo Fashion-MNIST CNN (Adam) and the zoo ResNet-14
# (cifar10_resnet, SGD momentum) at batch 64 and 256, and zoo:mobilenet_v2
# (Adam) at batch 64, the image models over a synthetic CIFAR-10-shaped set
# (scripts/bench/make_synthetic_cifar.py). Prints samples/s, the
# edl/PyTorch ratio and, on a GPU, each side's peak GPU memory.
#
# Usage: DEVICE=cuda BUILD_DIR=build scripts/bench/gpu_bench.sh [CNN_STEPS=500] [RESNET_STEPS=200]
#        [MOBILENET_STEPS=100]
# Environment: DEVICE (cuda or cpu, default cuda), BUILD_DIR (default build),
# THREADS (CPU threads, default 2), DATA_DIR (Fashion-MNIST IDX files, default
# Debian's /usr/share/datasets/fashion-mnist), PYTHON (a python3 with torch;
# default /usr/bin/python3 when it has torch, else python3 on the PATH),
# TORCH_TF32=1 (let PyTorch use TF32 tensor cores; by default they are off on
# both sides, so both do the same fp32 arithmetic).
#
# DEVICE=cpu runs the same comparison on the CPU; that is how the script is
# checked on machines without a GPU. For cuda, build the edl_cuda target
# (libedl_cuda.so beside edl) and use a PyTorch with CUDA. edl's figure is its
# whole training loop (start-up and cuDNN's algorithm search included);
# PyTorch's excludes 10 warm-up steps, so short runs favour PyTorch. Peak GPU
# memory is the most nvidia-smi reported in use during the run (sampled every
# 20 ms) less what was in use before it: context, caches and all.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEVICE=${DEVICE:-cuda}
THREADS=${THREADS:-2}
CNN_STEPS=${1:-500}
RESNET_STEPS=${2:-200}
MOBILENET_STEPS=${3:-100}
EDL=${BUILD_DIR:-build}/edl
D=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
if [[ -z ${PYTHON:-} ]]; then
  PYTHON=/usr/bin/python3
  "$PYTHON" -c "import torch" 2>/dev/null || PYTHON=python3
fi
[[ -x $EDL ]] || { echo "gpu_bench.sh: $EDL not built" >&2; exit 1; }
[[ -r $D/train-images-idx3-ubyte.gz ]] ||
  { echo "gpu_bench.sh: no Fashion-MNIST in $D (set DATA_DIR)" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$PYTHON" scripts/bench/make_synthetic_cifar.py "$OUT/cifar" 10000
CIFAR=$OUT/cifar/synthetic-cifar-images-idx3-ubyte

gpu_mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
measure() {  # measure CMD...: runs CMD with stdout to $OUT/run.txt; sets PEAK (MiB or -)
  PEAK=-
  if [[ $DEVICE == cuda ]] && command -v nvidia-smi >/dev/null; then
    local base
    base=$(gpu_mem)
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 20 >"$OUT/mem.txt" &
    local poll=$!
    "$@" >"$OUT/run.txt" 2>"$OUT/run.err" || { kill $poll; cat "$OUT/run.err" >&2; exit 1; }
    kill $poll; wait $poll 2>/dev/null || true
    PEAK=$(( $(sort -n "$OUT/mem.txt" | tail -1) - base ))
  else
    "$@" >"$OUT/run.txt" 2>"$OUT/run.err" || { cat "$OUT/run.err" >&2; exit 1; }
  fi
}
edl_run() {  # edl_run MODEL DATA STEPS BATCH: EDL_RATE = samples/s of edl's training loop
  measure "$EDL" train --distribution_strategy=Local --device="$DEVICE" --num_threads="$THREADS" \
    --model_def="zoo:$1" --training_data="$2" --max_step="$3" --minibatch_size="$4" \
    --log_level=WARNING
  EDL_RATE=$(grep -o '[0-9.]* samples/s)' "$OUT/run.txt" | grep -o '^[0-9.]*')
  EDL_PEAK=$PEAK
}
torch_run() {  # torch_run WHICH STEPS BATCH DATA: TORCH_RATE
  measure "$PYTHON" scripts/bench/torch_train_bench.py "$1" "$2" "$3" "$DEVICE" "$THREADS" "$4"
  TORCH_RATE=$("$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['train_samples_per_s'])" \
    <"$OUT/run.txt")
  TORCH_PEAK=$PEAK
}

echo "training throughput, samples/s, device $DEVICE ($("$EDL" version | grep -E '^gpu:' || true))"
echo "PyTorch $("$PYTHON" -c 'import torch; print(torch.__version__)'), TF32 ${TORCH_TF32:-0}"
printf "%-16s %6s %10s %10s %8s %12s %12s\n" model batch edl pytorch ratio "edl MiB" "torch MiB"
for row in "fashion_mnist_cnn cnn $D/train-images-idx3-ubyte.gz $CNN_STEPS 64" \
           "fashion_mnist_cnn cnn $D/train-images-idx3-ubyte.gz $CNN_STEPS 256" \
           "cifar10_resnet resnet $CIFAR $RESNET_STEPS 64" \
           "cifar10_resnet resnet $CIFAR $RESNET_STEPS 256" \
           "mobilenet_v2 mobilenet $CIFAR $MOBILENET_STEPS 64"; do
  read -r zoo which data steps batch <<<"$row"
  edl_run "$zoo" "$data" "$steps" "$batch"
  torch_run "$which" "$steps" "$batch" "$data"
  printf "%-16s %6d %10.0f %10.0f %7.2fx %12s %12s\n" "$zoo" "$batch" "$EDL_RATE" "$TORCH_RATE" \
    "$("$PYTHON" -c "print($EDL_RATE / $TORCH_RATE)")" "$EDL_PEAK" "$TORCH_PEAK"
done
echo "(ratio = edl / PyTorch; > 1: edl trains faster)"
