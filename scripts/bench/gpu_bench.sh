#!/usr/bin/env bash
# Benchmark for issue 6: training throughput of edl against PyTorch on the
# same device in one run, on the zoo Fashion-MNIST CNN (batch 64, Adam) and
# on the zoo ResNet-14 (cifar10_resnet: batch 128, SGD momentum) over a
# synthetic CIFAR-10-shaped set (scripts/bench/make_synthetic_cifar.py).
# Prints samples/s and the edl/PyTorch ratio.
#
# Usage: DEVICE=cuda BUILD_DIR=build scripts/bench/gpu_bench.sh [CNN_STEPS=500] [RESNET_STEPS=200]
#        [MOBILENET_STEPS=100]
# (mobilenet_v2: zoo:mobilenet_v2, batch 64, Adam, the same synthetic images.)
# DEVICE=cpu runs the same comparison on the CPU (THREADS threads, default
# 2); that is how the script is checked on machines without a GPU. For cuda,
# build the edl_cuda target (libedl_cuda.so beside edl) and use a PyTorch
# with CUDA. edl's figure is its whole training loop (start-up and cuDNN's
# algorithm search included); PyTorch's excludes 10 warm-up steps, so short
# runs favour PyTorch.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEVICE=${DEVICE:-cuda}
THREADS=${THREADS:-2}
CNN_STEPS=${1:-500}
RESNET_STEPS=${2:-200}
MOBILENET_STEPS=${3:-100}
EDL=${BUILD_DIR:-build}/edl
PYTHON=${PYTHON:-/usr/bin/python3}
[[ -x $EDL ]] || { echo "gpu_bench.sh: $EDL not built" >&2; exit 1; }
D=/usr/share/datasets/fashion-mnist
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$PYTHON" scripts/bench/make_synthetic_cifar.py "$OUT/cifar" 10000
CIFAR=$OUT/cifar/synthetic-cifar-images-idx3-ubyte

edl_rate() {  # edl_rate MODEL DATA STEPS BATCH: samples/s of edl's training loop
  "$EDL" train --distribution_strategy=Local --device="$DEVICE" --num_threads="$THREADS" \
    --model_def="zoo:$1" --training_data="$2" --max_step="$3" --minibatch_size="$4" \
    --log_level=WARNING >"$OUT/edl.txt" 2>"$OUT/edl.err" ||
    { cat "$OUT/edl.err" >&2; exit 1; }
  grep -o '[0-9.]* samples/s)' "$OUT/edl.txt" | grep -o '^[0-9.]*'
}
torch_rate() {  # torch_rate WHICH STEPS BATCH DATA
  "$PYTHON" scripts/bench/torch_train_bench.py "$1" "$2" "$3" "$DEVICE" "$THREADS" "$4" |
    "$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['train_samples_per_s'])"
}

echo "training throughput, samples/s, device $DEVICE ($("$EDL" version | grep -E '^gpu:' || true))"
printf "%-16s %8s %12s %12s %8s\n" model batch edl pytorch ratio
for row in "fashion_mnist_cnn cnn $D/train-images-idx3-ubyte.gz $CNN_STEPS 64" \
           "cifar10_resnet resnet $CIFAR $RESNET_STEPS 128" \
           "mobilenet_v2 mobilenet $CIFAR $MOBILENET_STEPS 64"; do
  read -r zoo which data steps batch <<<"$row"
  e=$(edl_rate "$zoo" "$data" "$steps" "$batch")
  t=$(torch_rate "$which" "$steps" "$batch" "$data")
  printf "%-16s %8d %12.0f %12.0f %7.2fx\n" "$zoo" "$batch" "$e" "$t" \
    "$("$PYTHON" -c "print($e / $t)")"
done
echo "(ratio = edl / PyTorch; > 1: edl trains faster)"
