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
# It fails (exit 1) when a test fails, when no CUDA test ran (every one
# skipped: no GPU, no driver, or no libedl_cuda.so, so nothing was checked on
# a GPU), when a training run fails, or when a run's held-out accuracy is
# below its bar: CNN 0.89 locally and 0.85 distributed, ResNet 0.98 (docs/gpu.md,
# 'Verified on real GPUs': the lowest figures measured, CPU or GPU, were
# 0.9042, 0.8679 and 0.8705 for the CNN and 0.9900 for the ResNet).
#
# Usage: [DEVICE=cuda] [BUILD_DIR=build] [DATA_DIR=/usr/share/datasets/fashion-mnist]
#        [LOG_DIR=dir] [RUN_LIMIT=300] scripts/gpu_check.sh [tests|train|all|selftest]
# selftest checks this script's own checks on made-up logs (no GPU needed).
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

# cuda_tests_ran LOG: whether gtest's LOG shows a CUDA test (Cuda*) that ran
# on the GPU, passed or failed, rather than skipped; says how many of each.
cuda_tests_ran() {
  local ran skipped
  ran=$(grep -cE '^\[ +(OK|FAILED) +\] Cuda[A-Za-z]*\.[A-Za-z0-9_/]+ \(' "$1")
  skipped=$(grep -cE '^\[ +SKIPPED +\] Cuda[A-Za-z]*\.[A-Za-z0-9_/]+ \(' "$1")
  echo "CUDA tests: $ran ran on the GPU, $skipped skipped"
  if ((ran == 0)); then
    echo "FAILED: no CUDA test ran on a GPU (none found, or all skipped); why:"
    grep -m1 -A1 -E '^\[ +SKIPPED +\] Cuda|CUDA runtime unavailable' "$1" | head -3
    return 1
  fi
}

# heldout_accuracy LOG: the held-out accuracy a run printed: the local
# trainer's `final: ... val_accuracy X`, else the job's last `evaluation at
# version N: ... accuracy X`; empty when there is none.
heldout_accuracy() {
  local a
  a=$(grep -E '^final:' "$1" | grep -oE ' val_accuracy [0-9.]+' | tail -1 | awk '{print $2}')
  [[ -n $a ]] || a=$(grep -E '^evaluation at version' "$1" | tail -1 |
    grep -oE '[ :]accuracy [0-9.]+' | awk '{print $2}')
  echo "$a"
}

# meets_bar NAME LOG BAR: whether the run's held-out accuracy is at least BAR.
meets_bar() {
  local acc
  acc=$(heldout_accuracy "$2")
  if [[ -z $acc ]]; then
    echo "$1 FAILED: no held-out accuracy in its output"; return 1
  fi
  if awk -v a="$acc" -v b="$3" 'BEGIN { exit !(a >= b) }'; then
    echo "$1: held-out accuracy $acc >= $3"
  else
    echo "$1 FAILED: held-out accuracy $acc is below the bar $3"; return 1
  fi
}

if [[ $WHAT == selftest ]]; then
  # The checks above on made-up logs, without a GPU: scripts/gpu_check.sh selftest.
  t=$(mktemp -d)
  printf '[  SKIPPED ] CudaBackendTest.Add (0 ms)\n[  SKIPPED ] CudaBackendTest.Mul (0 ms)\n' >"$t/skip"
  printf '[       OK ] CudaBackendTest.Add (3 ms)\n[  SKIPPED ] DeviceRuntimeTest.X (0 ms)\n' >"$t/ran"
  printf 'final: loss 0.2 accuracy 0.93 val_loss 0.3 val_accuracy 0.9042 (10 steps)\n' >"$t/local"
  printf 'evaluation at version 5: loss 0.9 accuracy 0.50\nevaluation at version 9: loss 0.4 accuracy 0.8679\n' >"$t/job"
  ok=1
  cuda_tests_ran "$t/skip" && { echo "selftest: all skipped passed"; ok=0; }
  cuda_tests_ran "$t/ran" || { echo "selftest: a test that ran failed"; ok=0; }
  meets_bar local "$t/local" 0.89 || ok=0
  meets_bar local "$t/local" 0.95 && { echo "selftest: 0.9042 met 0.95"; ok=0; }
  meets_bar job "$t/job" 0.85 || ok=0
  meets_bar job "$t/job" 0.87 && { echo "selftest: the last evaluation was not the one read"; ok=0; }
  meets_bar none "$t/skip" 0.5 && { echo "selftest: no accuracy passed"; ok=0; }
  rm -rf "$t"
  if ((ok)); then echo "selftest: ok"; exit 0; fi
  echo "selftest: FAILED"; exit 1
fi

if [[ $WHAT == tests || $WHAT == all ]]; then
  echo "== CudaBackendTest.* on $("$B/edl" version | grep -E '^gpu:' || echo 'no gpu line')"
  timeout 300 "$B/tests/tensor_test" --gtest_filter='CudaBackend*:DeviceRuntime*' \
    >"$L/tensor_test.txt" 2>&1 || failed=1
  grep -E '^\[  (FAILED|PASSED|SKIPPED) |tests ran|Failure|error|Expected|Which is|  Actual' \
    "$L/tensor_test.txt" | head -60
  cuda_tests_ran "$L/tensor_test.txt" || failed=1
fi

# run NAME TIMEOUT BAR ARGS...: trains, prints the final line or the
# failure, and checks the held-out accuracy against BAR.
run() {
  local name=$1 limit=$2 bar=$3; shift 3
  local t0=$SECONDS
  if timeout "$limit" "$B/edl" train --device="$DEVICE" "$@" >"$L/$name.txt" 2>"$L/$name.err"; then
    echo "$name ($((SECONDS - t0)) s): $(grep -E '^final|^evaluation at|^training:' "$L/$name.txt" |
      tail -2 | paste -sd' ')"
    meets_bar "$name" "$L/$name.txt" "$bar" || failed=1
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
  run cnn_local "$LIMIT" 0.89 --distribution_strategy=Local "${CNN[@]}" --num_epochs=2
  # The ResNet's held-out accuracy swings between early evaluations (batch
  # norm's moving statistics lag); by these epoch counts it has settled at
  # 0.997-0.999 on the CPU (seeds 0 and 1 locally; PS, allreduce).
  run resnet_local "$LIMIT" 0.98 --distribution_strategy=Local "${RES[@]}" --num_epochs=6
  run cnn_ps "$LIMIT" 0.85 --distribution_strategy=ParameterServerStrategy --num_workers=2 --num_ps_pods=1 \
    --job_name=cnn-ps "${JOB[@]}" "${CNN[@]}" --num_epochs=1
  run resnet_ps "$LIMIT" 0.98 --distribution_strategy=ParameterServerStrategy --num_workers=2 --num_ps_pods=1 \
    --job_name=resnet-ps "${JOB[@]}" "${RES[@]}" --num_epochs=10
  run cnn_allreduce "$LIMIT" 0.85 --distribution_strategy=AllreduceStrategy --num_workers=2 \
    --job_name=cnn-ar "${JOB[@]}" "${CNN[@]}" --num_epochs=1
  run resnet_allreduce "$LIMIT" 0.98 --distribution_strategy=AllreduceStrategy --num_workers=2 \
    --job_name=resnet-ar "${JOB[@]}" "${RES[@]}" --num_epochs=6
fi
exit $failed
