#!/usr/bin/env bash
# The checks of a real GPU (docs/gpu.md, 'Verified on real GPUs'), in one run:
# the CUDA backend's tests, then the zoo CNN (Fashion-MNIST) and
# zoo:cifar10_resnet (a planted synthetic CIFAR-10-shaped task,
# scripts/bench/make_synthetic_cifar.py --planted --contrast=80) trained with
# --device=cuda locally, on the local cluster with a parameter server, and with
# AllreduceStrategy (two workers sharing the GPU). Each run's final line (loss,
# accuracy, validation accuracy, samples/s) is printed; run it again with
# DEVICE=cpu for the CPU figures to compare.
#
# Usage: [DEVICE=cuda] [BUILD_DIR=build] [DATA_DIR=/usr/share/datasets/fashion-mnist]
#        [LOG_DIR=dir] [RUN_LIMIT=300] scripts/gpu_check.sh [tests|train|all]
# BUILD_DIR holds edl, libedl_cuda.so and tests/tensor_test. Logs of every
# run go to LOG_DIR (default a temporary directory, removed at the end).
set -uo pipefail
cd "$(dirname "$0")/.."
DEVICE=${DEVICE:-cuda}
B=${BUILD_DIR:-build}
D=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
WHAT=${1:-all}
PYTHON=${PYTHON:-python3}
if [[ -n ${LOG_DIR:-} ]]; then
  L=$LOG_DIR; mkdir -p "$L"
else
  L=$(mktemp -d); trap 'rm -rf "$L"' EXIT
fi
export EDL_CUDA_PLUGIN=${EDL_CUDA_PLUGIN:-$(cd "$B" && pwd)/libedl_cuda.so}
LIMIT=${RUN_LIMIT:-300}  # seconds per training run
failed=0

if [[ $WHAT == tests || $WHAT == all ]]; then
  echo "== CudaBackendTest.* on $("$B/edl" version | grep -E '^gpu:' || echo 'no gpu line')"
  timeout 300 "$B/tests/tensor_test" --gtest_filter='CudaBackend*:DeviceRuntime*' \
    >"$L/tensor_test.txt" 2>&1 || failed=1
  grep -E '^\[  (FAILED|PASSED|SKIPPED) |tests ran|Failure|error|Expected|Which is|  Actual' \
    "$L/tensor_test.txt" | head -60
fi

run() {  # run NAME TIMEOUT ARGS...: trains, prints the final line or the failure
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  if timeout "$limit" "$B/edl" train --device="$DEVICE" "$@" >"$L/$name.txt" 2>"$L/$name.err"; then
    echo "$name ($((SECONDS - t0)) s): $(grep -E '^final|^evaluation at|^training:' "$L/$name.txt" |
      tail -2 | paste -sd' ')"
  else
    echo "$name FAILED (exit $?, $((SECONDS - t0)) s):"; tail -15 "$L/$name.err"; failed=1
  fi
}

if [[ $WHAT == train || $WHAT == all ]]; then
  "$PYTHON" scripts/bench/make_synthetic_cifar.py "$L/cifar" 10000 --planted --contrast=80
  "$PYTHON" scripts/bench/make_synthetic_cifar.py "$L/cifar" 2000 --planted --test --contrast=80
  CNN=(--model_def=zoo:fashion_mnist_cnn --training_data="$D/train-images-idx3-ubyte.gz"
       --validation_data="$D/t10k-images-idx3-ubyte.gz" --minibatch_size=64)
  RES=(--model_def=zoo:cifar10_resnet --training_data="$L/cifar/synthetic-cifar-images-idx3-ubyte"
       --validation_data="$L/cifar/synthetic-cifar-test-images-idx3-ubyte" --minibatch_size=64)
  JOB=(--jobs_dir="$L/jobs" --log_level=WARNING)
  echo "== training, device $DEVICE"
  run cnn_local "$LIMIT" --distribution_strategy=Local "${CNN[@]}" --num_epochs=2
  # The ResNet's held-out accuracy swings between early evaluations (batch
  # norm's moving statistics lag); by these epoch counts it has settled at
  # 0.997-0.999 on the CPU (seeds 0 and 1 locally; PS, allreduce).
  run resnet_local "$LIMIT" --distribution_strategy=Local "${RES[@]}" --num_epochs=6
  run cnn_ps "$LIMIT" --distribution_strategy=ParameterServerStrategy --num_workers=2 --num_ps_pods=1 \
    --job_name=cnn-ps "${JOB[@]}" "${CNN[@]}" --num_epochs=1
  run resnet_ps "$LIMIT" --distribution_strategy=ParameterServerStrategy --num_workers=2 --num_ps_pods=1 \
    --job_name=resnet-ps "${JOB[@]}" "${RES[@]}" --num_epochs=10
  run cnn_allreduce "$LIMIT" --distribution_strategy=AllreduceStrategy --num_workers=2 \
    --job_name=cnn-ar "${JOB[@]}" "${CNN[@]}" --num_epochs=1
  run resnet_allreduce "$LIMIT" --distribution_strategy=AllreduceStrategy --num_workers=2 \
    --job_name=resnet-ar "${JOB[@]}" "${RES[@]}" --num_epochs=6
fi
exit $failed
