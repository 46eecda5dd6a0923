#!/usr/bin/env bash
# Training throughput of edl against PyTorch on the same device in one run
# (docs/gpu.md, 'Benchmark against PyTorch on the same device'): the zoo
# Fashion-MNIST CNN (Adam) and the zoo ResNet-14 (cifar10_resnet, SGD
# momentum) at batch 64 and 256, and zoo:mobilenet_v2 (Adam) at batch 64,
# the image models over a synthetic CIFAR-10-shaped set
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
# both sides, so both do the same fp32 arithmetic), EDL_VARIANTS (edl runs
# each row once per space-separated variant, a comma list of VAR=VALUE set for
# that run, e.g. "EDL_CUDNN_NCHW=none EDL_CUDNN_NCHW=w"; one column each, the
# ratio and memory for the first; PyTorch runs once per row), REPEATS (rounds
# of every variant and PyTorch per row, default 1; the table shows medians and
# stderr each run), ROWS (only these rows, e.g. "cifar10_resnet/256
# fashion_mnist_cnn/64").
#
# DEVICE=cpu runs the same comparison on the CPU; that is how the script is
# checked on machines without a GPU. For cuda, build the edl_cuda target
# (libedl_cuda.so beside edl) and use a PyTorch with CUDA. Both sides' figures
# leave out the first 10 steps (start-up, cuDNN's algorithm choice, lazily
# loaded kernels): edl logs its rate after them at INFO; "whole" is edl's
# whole loop, those steps included (its final line). Peak GPU
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
edl_run() {  # edl_run MODEL DATA STEPS BATCH [VAR=VALUE,...]: EDL_RATE = samples/s of edl's loop
  local -a vars=()
  [[ -n ${5:-} ]] && IFS=, read -ra vars <<<"$5"
  measure env "${vars[@]}" "$EDL" train --distribution_strategy=Local --device="$DEVICE" --num_threads="$THREADS" \
    --model_def="zoo:$1" --training_data="$2" --max_step="$3" --minibatch_size="$4" \
    --log_level=INFO
  EDL_WHOLE=$(grep -o '[0-9.]* samples/s)' "$OUT/run.txt" | grep -o '^[0-9.]*')
  # After the first 10 steps, as PyTorch's figure (logged at INFO).
  EDL_RATE=$(grep -o '[0-9]* samples/s after the first' "$OUT/run.err" | grep -o '^[0-9]*' || true)
  EDL_RATE=${EDL_RATE:-$EDL_WHOLE}
  EDL_PEAK=$PEAK
}
torch_run() {  # torch_run WHICH STEPS BATCH DATA: TORCH_RATE
  measure "$PYTHON" scripts/bench/torch_train_bench.py "$1" "$2" "$3" "$DEVICE" "$THREADS" "$4"
  TORCH_RATE=$("$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['train_samples_per_s'])" \
    <"$OUT/run.txt")
  TORCH_PEAK=$PEAK
}

read -ra variants <<<"${EDL_VARIANTS:-}"
((${#variants[@]})) || variants=("")
echo "training throughput, samples/s, device $DEVICE ($("$EDL" version | grep -E '^gpu:' || true))"
echo "PyTorch $("$PYTHON" -c 'import torch; print(torch.__version__)'), TF32 ${TORCH_TF32:-0}"
if ((${#variants[@]} > 1)); then
  for i in "${!variants[@]}"; do echo "edl$i: ${variants[$i]:-(environment as is)}"; done
fi
header=(model batch)
for i in "${!variants[@]}"; do header+=("$( ((${#variants[@]} > 1)) && echo "edl$i" || echo edl)"); done
header+=(whole pytorch ratio "edl MiB" "torch MiB")
fmt="%-16s %6s$(printf ' %%10s%.0s' "${variants[@]}") %10s %10s %8s %12s %12s\n"
# shellcheck disable=SC2059
printf "$fmt" "${header[@]}"
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for row in "fashion_mnist_cnn cnn $D/train-images-idx3-ubyte.gz $CNN_STEPS 64" \
           "fashion_mnist_cnn cnn $D/train-images-idx3-ubyte.gz $CNN_STEPS 256" \
           "cifar10_resnet resnet $CIFAR $RESNET_STEPS 64" \
           "cifar10_resnet resnet $CIFAR $RESNET_STEPS 256" \
           "mobilenet_v2 mobilenet $CIFAR $MOBILENET_STEPS 64"; do
  read -r zoo which data steps batch <<<"$row"
  [[ -z ${ROWS:-} || " $ROWS " == *" $zoo/$batch "* ]] || continue
  # REPEATS rounds, each running every variant and then PyTorch once (so
  # drifting clocks touch all alike); the table has the medians.
  declare -A got=()
  wholes=() torches=() peaks=() tpeaks=()
  for ((r = 0; r < ${REPEATS:-1}; ++r)); do
    for i in "${!variants[@]}"; do
      edl_run "$zoo" "$data" "$steps" "$batch" "${variants[$i]}"
      got[$i]+=" $EDL_RATE"
      ((i == 0)) && { wholes+=("$EDL_WHOLE"); peaks+=("$EDL_PEAK"); }
    done
    torch_run "$which" "$steps" "$batch" "$data"
    torches+=("$TORCH_RATE"); tpeaks+=("$TORCH_PEAK")
  done
  rates=()
  for i in "${!variants[@]}"; do
    # shellcheck disable=SC2086
    rates+=("$(printf '%.0f' "$(median ${got[$i]})")")
    ((${REPEATS:-1} > 1)) && echo "  $zoo/$batch edl$i runs:${got[$i]}" >&2
  done
  ((${REPEATS:-1} > 1)) && echo "  $zoo/$batch pytorch runs: ${torches[*]}" >&2
  first_rate=$(median ${got[0]})
  TORCH_RATE=$(median "${torches[@]}")
  # shellcheck disable=SC2059
  printf "$fmt" "$zoo" "$batch" "${rates[@]}" "$(printf '%.0f' "$(median "${wholes[@]}")")" \
    "$(printf '%.0f' "$TORCH_RATE")" \
    "$("$PYTHON" -c "print('%.2fx' % ($first_rate / $TORCH_RATE))")" "${peaks[-1]}" "${tpeaks[-1]}"
  unset got
done
echo "(ratio = edl / PyTorch after 10 warm-up steps, edl's first variant; > 1: edl trains faster;"
echo " whole = edl's first variant over its whole loop)"
