#!/usr/bin/env bash
# Benchmark: edl vs PyTorch CPU (Debian python3-torch) in one run, on the zoo
# Fashion-MNIST MLP and CNN: batch 64, Adam, THREADS threads. Prints training
# and inference throughput (samples/s), peak memory, and edl/PyTorch ratios.
#
# Usage: scripts/bench/bench_zoo.sh [THREADS=2] [MLP_STEPS=10000] [CNN_STEPS=300]
# PyTorch runs with Debian's OpenBLAS (libopenblas0-openmp, installed by
# `scripts/install-deps.sh --bench`) and OPENBLAS_CORETYPE=Cooperlake (its
# best configuration here); set TORCH_BLAS=reference to compare with the
# reference BLAS that python3-torch uses without OpenBLAS.
set -euo pipefail
cd "$(dirname "$0")/../.."
THREADS=${1:-2}
MLP_STEPS=${2:-10000}
CNN_STEPS=${3:-300}
D=/usr/share/datasets/fashion-mnist
scripts/install-deps.sh --bench >/dev/null
scripts/build.sh edl >/dev/null
EDL=./${BUILD_DIR:-build}/edl
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Cooperlake}
torch_env=(env OMP_NUM_THREADS=$THREADS)
if [[ "${TORCH_BLAS:-openblas}" == reference ]]; then
  torch_env+=(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas)
else
  torch_env+=(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp)
fi

# Runs a command, printing its peak RSS (MiB) to $OUT/rss.
peak() { /usr/bin/python3 scripts/bench/peak_rss.py "$OUT/rss" "$@"; }

printf "%-5s %-8s %14s %14s %10s\n" model system "train samp/s" "infer samp/s" "peak MiB"
for model in mlp cnn; do
  steps=$MLP_STEPS; [[ $model == cnn ]] && steps=$CNN_STEPS
  # edl: train `steps` steps (the whole loop: batching, forward, backward,
  # Adam, metrics), then inference (evaluate: forward, loss, metrics) over
  # the 60,000 training images.
  peak $EDL train --distribution_strategy=Local --model_def=zoo:fashion_mnist_$model --training_data=$D/train-images-idx3-ubyte.gz \
    --minibatch_size=64 --max_step=$steps --num_threads=$THREADS --output=$OUT/$model \
    --log_level=WARNING > $OUT/edl_train.txt 2>/dev/null
  edl_rss=$(cat $OUT/rss)
  edl_train=$(grep -o '[0-9.]* samples/s)' $OUT/edl_train.txt | grep -o '^[0-9.]*')
  $EDL evaluate --checkpoint_dir_for_init=$OUT/$model --validation_data=$D/train-images-idx3-ubyte.gz \
    --minibatch_size=256 --num_threads=$THREADS > $OUT/edl_eval.txt 2>/dev/null
  edl_infer=$(grep -o '[0-9.]* records/s' $OUT/edl_eval.txt | grep -o '^[0-9.]*')
  "${torch_env[@]}" /usr/bin/python3 scripts/bench/torch_zoo.py $model $steps $THREADS $D > $OUT/torch.json
  t_train=$(python3 -c "import json;print(json.load(open('$OUT/torch.json'))['train_samples_per_s'])")
  t_infer=$(python3 -c "import json;print(json.load(open('$OUT/torch.json'))['infer_samples_per_s'])")
  t_rss=$(python3 -c "import json;print(json.load(open('$OUT/torch.json'))['peak_rss_mib'])")
  printf "%-5s %-8s %14.0f %14.0f %10.0f\n" $model edl "$edl_train" "$edl_infer" "$edl_rss"
  printf "%-5s %-8s %14.0f %14.0f %10.0f\n" $model pytorch "$t_train" "$t_infer" "$t_rss"
  python3 -c "print('%-5s %-8s %13.2fx %13.2fx %9.2fx' % ('$model', 'ratio', $edl_train/$t_train, $edl_infer/$t_infer, $edl_rss/$t_rss))"
done
echo "(ratio = edl / PyTorch; > 1 means edl is faster for throughput, uses more memory for peak MiB)"
