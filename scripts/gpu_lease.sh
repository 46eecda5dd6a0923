#!/usr/bin/env bash
# Runs edl's GPU checks on a borrowed GPU machine that can fetch nothing
# (docs/gpu.md, 'Verified on real GPUs'): `pack` on the build machine gathers
# what that machine lacks, `run` there runs the checks from it.
#
#   scripts/gpu_lease.sh pack [BUILD_DIR=build]   # here: fills out/gpu/
#   scripts/gpu_lease.sh run STEP...              # there, from the repo root
#
# pack copies edl, libedl_cuda.so, tests/tensor_test and bench/edl_ps_bench,
# the shared libraries they need that a stock Ubuntu 24.04 + CUDA image lacks
# (oneDNN, protobuf, yaml-cpp, ...; never the driver, cuDNN or cuBLAS) and
# Fashion-MNIST into out/gpu (about 46 MB, binaries and libraries
# xz-compressed; out/ is ignored by git). run finds cuDNN 9 and cuBLAS 13 on
# that machine (the CUDA toolkit or the PyTorch wheels), points edl's loader
# at them (wrapper scripts, so PyTorch keeps its own libraries) and runs each
# STEP, logging to $LOG_DIR (default out/gpu/logs):
#   tests     CudaBackendTest.* with each convolution layout in $LAYOUTS
#             (default "fd none fdw", values of EDL_CUDNN_NCHW)
#   train     scripts/gpu_check.sh train (six trainings on the GPU)
#   bench     scripts/bench/gpu_bench.sh with $BENCH_ARGS (steps) and
#             $BENCH_VARIANTS (its EDL_VARIANTS)
#   wire      the parameter-server wire and distributed training on a
#             machine with cores to spare: scripts/bench/ps_bench.sh's
#             benchmark, then scripts/bench/dist_vs_local.sh (5 epochs of the
#             MLP, 1 of the CNN) against local with 2 threads: the jobs with
#             one thread per process (1 PS + 1 worker: the same 2 threads in
#             all), then with their default threads
#   profile   per-kernel GPU time (Nsight Compute) of about a step of the
#             CNN and the ResNet at batch 256 and MobileNetV2 at 64, summed by
#             kernel name ($PROFILE_MODELS picks among them)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
P=out/gpu
what=${1:-}
shift || true

if [[ $what == pack ]]; then
  B=${1:-build}
  rm -rf "$P" && mkdir -p "$P/bin/tests" "$P/bin/bench" "$P/lib" "$P/data"
  cp "$B/edl" "$P/bin/edl.bin"
  cp "$B/libedl_cuda.so" "$P/bin/"
  cp "$B/tests/tensor_test" "$P/bin/tests/tensor_test.bin"
  cp "$B/bench/edl_ps_bench" "$P/bin/bench/edl_ps_bench.bin"
  strip "$P/bin/edl.bin" "$P/bin/tests/tensor_test.bin" "$P/bin/bench/edl_ps_bench.bin"
  cp /usr/share/datasets/fashion-mnist/*.gz "$P/data/"
  # Libraries outside glibc, libstdc++, libgcc and CUDA that the binaries
  # load; the GPU image is Ubuntu 24.04, whose copies of those are newer.
  for f in "$B/edl" "$B/tests/tensor_test" "$B/bench/edl_ps_bench" "$B/libedl_cuda.so"; do
    ldd "$f" | awk '$3 ~ /^\// {print $3}'
  done | sort -u | grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so|libcudnn|libcublas|libcuda' |
    while read -r lib; do cp -L "$lib" "$P/lib/"; done
  # Wrappers: only edl's processes see the carried libraries (PyTorch keeps
  # its own); $EDL_GPU_LIBS names the machine's cuDNN and cuBLAS folders.
  for w in bin/edl:.. bin/tests/tensor_test:../.. bin/bench/edl_ps_bench:../..; do
    cat >"$P/${w%:*}" <<WRAP
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
LD_LIBRARY_PATH=\$here/${w#*:}/lib:\${EDL_GPU_LIBS:-}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec "\$here/\$(basename "\$0").bin" "\$@"
WRAP
    chmod +x "$P/${w%:*}"
  done
  # The device tool carries at most 64 MiB: bin and lib travel compressed.
  tar -C "$P" -cf - bin lib | xz -T0 -6 >"$P/pack.tar.xz"
  rm -rf "${P:?}/bin" "${P:?}/lib"
  du -sh "$P" "$P"/*
  exit 0
fi

[[ $what == run ]] || { echo "usage: $0 pack [BUILD_DIR] | run STEP..." >&2; exit 2; }
L=${LOG_DIR:-$P/logs}
mkdir -p "$L"
[[ -d $P/bin ]] || xz -dc "$P/pack.tar.xz" | tar -C "$P" -xf -
EDL_GPU_LIBS=$(find / -xdev \( -name 'libcudnn.so.9' -o -name 'libcublas.so.13' \) 2>/dev/null |
               xargs -r -n1 dirname | sort -u | paste -sd:)
export EDL_GPU_LIBS
export EDL_CUDA_PLUGIN=$PWD/$P/bin/libedl_cuda.so
export BUILD_DIR=$P/bin DATA_DIR=$P/data
echo "cuDNN and cuBLAS from: $EDL_GPU_LIBS"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$P/bin/edl" version
failed=0
for step in "$@"; do
  echo "== $step"
  case $step in
    tests)
      for layout in ${LAYOUTS:-fd none fdw}; do
        EDL_CUDNN_NCHW=$layout timeout 300 "$P/bin/tests/tensor_test" \
          --gtest_filter='CudaBackend*:DeviceRuntime*' >"$L/tensor_test_$layout.txt" 2>&1 || failed=1
        echo "EDL_CUDNN_NCHW=$layout: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$L/tensor_test_$layout.txt" | paste -sd' ')"
        grep -E '^\[  FAILED|Failure|Expected|Which is|  Actual|CHECK' "$L/tensor_test_$layout.txt" | head -20
        # Every CUDA test skipped (no driver, no plugin) checked nothing.
        grep -qE '^\[ +(OK|FAILED) +\] Cuda[A-Za-z]*\.' "$L/tensor_test_$layout.txt" ||
          { echo "FAILED: no CUDA test ran on a GPU (all skipped)"; failed=1; }
      done ;;
    train)
      LOG_DIR=$L/train RUN_LIMIT=120 scripts/gpu_check.sh train || failed=1 ;;
    bench)
      # shellcheck disable=SC2086
      EDL_VARIANTS=${BENCH_VARIANTS:-} DEVICE=cuda THREADS=8 PYTHON=python3 \
        scripts/bench/gpu_bench.sh ${BENCH_ARGS:-2000 300 100} 2>&1 | tee "$L/bench.txt" ||
        failed=1 ;;
    wire)
      timeout 300 "$P/bin/bench/edl_ps_bench" 2>&1 | tee "$L/ps_bench.txt" || failed=1
      for flags in --num_threads=1 ""; do
        for model in "mlp 5" "cnn 1"; do
          read -r m e <<<"$model"
          SKIP_BUILD=1 EPOCHS=$e MODELS=$m LOCAL_THREADS=2 JOB_FLAGS=$flags timeout 300 \
            scripts/bench/dist_vs_local.sh 2>&1 | tee -a "$L/dist_vs_local.txt" || failed=1
        done
      done ;;
    profile)
      tmp=$(mktemp -d)
      python3 scripts/bench/make_synthetic_cifar.py "$tmp/cifar" 2000 >/dev/null
      for m in "fashion_mnist_cnn $DATA_DIR/train-images-idx3-ubyte.gz 256 700 140" \
               "cifar10_resnet $tmp/cifar/synthetic-cifar-images-idx3-ubyte 256 2500 260" \
               "mobilenet_v2 $tmp/cifar/synthetic-cifar-images-idx3-ubyte 64 5000 600"; do
        read -r model data batch skip count <<<"$m"
        [[ " ${PROFILE_MODELS:-fashion_mnist_cnn cifar10_resnet mobilenet_v2} " == *" $model "* ]] ||
          continue
        timeout 240 ncu --metrics gpu__time_duration.sum --csv --launch-skip "$skip" \
          --launch-count "$count" "$P/bin/edl" train --distribution_strategy=Local \
          --device=cuda --model_def="zoo:$model" --training_data="$data" \
          --minibatch_size="$batch" --max_step=40 --log_level=WARNING \
          >"$L/ncu_$model.csv" 2>"$L/ncu_$model.err" || { failed=1; tail -5 "$L/ncu_$model.err"; }
        python3 scripts/bench/kernel_summary.py "$L/ncu_$model.csv" | tee "$L/ncu_$model.txt" | head -22
      done ;;
    *) echo "unknown step $step" >&2; failed=1 ;;
  esac
done
exit $failed
