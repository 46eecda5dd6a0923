#!/usr/bin/env bash
# Benchmark: LSTM and GRU training, edl vs PyTorch CPU (Debian python3-torch)
# in the same run. Model on both sides: Embedding(VOCAB, 128) -> LSTM or GRU
# (256 units, tanh/sigmoid, Keras' reset_after GRU = PyTorch's GRU) -> Dense(2),
# Adam(1e-3), cross-entropy from logits, batch 64, sequences of 100 tokens.
# Data: RECORDS generated sequences (the label is whether token 7 occurs more
# often than token 8; written once as CSV, read by both sides). Each side
# trains STEPS steps; edl's figure is the `final:` line of `edl train`
# (samples over all steps, the first included), PyTorch's the same span.
# Each configuration runs RUNS times, alternating; prints every run, the
# medians and their ratio (edl / PyTorch).
#
# PyTorch runs as in bench_zoo.sh: Debian's OpenBLAS with
# OPENBLAS_CORETYPE=Cooperlake (TORCH_BLAS=reference for the reference BLAS).
#
# DEVICE=cuda trains both on GPU 0 (edl --device=cuda: cuDNN's RNN; PyTorch
# likewise, TF32 off); then BUILD_DIR must already hold edl and
# libedl_cuda.so, and nothing is installed or built (a GPU machine may have
# no package mirror). PYTHON picks the interpreter with torch (default
# Debian's /usr/bin/python3).
#
# Usage: [DEVICE=cpu] scripts/bench/rnn_bench.sh [THREADS=2] [STEPS=60] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/../.."
THREADS=${1:-2}
STEPS=${2:-60}
RUNS=${3:-3}
RECORDS=${RECORDS:-3200}
VOCAB=1000
PY=${PYTHON:-/usr/bin/python3}
DEVICE=${DEVICE:-cpu}
if [[ $DEVICE == cpu ]]; then
  scripts/install-deps.sh --bench >/dev/null
  scripts/build.sh edl >/dev/null
else
  export EDL_CUDA_PLUGIN=${EDL_CUDA_PLUGIN:-$(cd "${BUILD_DIR:-build}" && pwd)/libedl_cuda.so}
fi
EDL=./${BUILD_DIR:-build}/edl
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
die() { echo "rnn_bench: $*" >&2; exit 1; }
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Cooperlake}
torch_env=(env "OMP_NUM_THREADS=$THREADS")
if [[ $DEVICE != cpu ]]; then
  :  # the GPU machine's torch brings its own libraries
elif [[ "${TORCH_BLAS:-openblas}" == reference ]]; then
  torch_env+=(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas)
else
  torch_env+=(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp)
fi

$PY - "$OUT/seq.csv" "$RECORDS" "$VOCAB" <<'PY'
import random, sys
path, n, vocab = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(5)
with open(path, "w") as f:
    f.write(",".join(f"t{i}" for i in range(100)) + ",label\n")
    for _ in range(n):
        t = [rng.randrange(vocab) if rng.random() < 0.9 else rng.choice((7, 8)) for _ in range(100)]
        f.write(",".join(map(str, t)) + f",{int(t.count(7) > t.count(8))}\n")
PY

model_json() {  # CELL -> the Keras model spec edl trains
  cat <<JSON
{"model": {"class_name": "Sequential", "config": {"name": "rnn_bench", "layers": [
  {"class_name": "Embedding", "config": {"name": "embed", "input_dim": $VOCAB, "output_dim": 128,
                                         "batch_input_shape": [null, 100]}},
  {"class_name": "$1", "config": {"name": "rnn", "units": 256}},
  {"class_name": "Dense", "config": {"name": "out", "units": 2}}]}},
 "loss": {"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}},
 "optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}},
 "input": {"format": "csv"}}
JSON
}

epochs=$(( (STEPS * 64 + RECORDS - 1) / RECORDS ))
printf "%-5s %-8s %4s %6s %9s %12s %10s\n" cell system run steps samples "train samp/s" "final loss"
RESULTS=$OUT/results.txt
for cell in LSTM GRU; do
  model_json $cell > "$OUT/$cell.json"
  lower=$(echo $cell | tr A-Z a-z)
  for run in $(seq 1 "$RUNS"); do
    $EDL train --distribution_strategy=Local --model_def="$OUT/$cell.json" \
      --training_data="$OUT/seq.csv" --minibatch_size=64 --num_epochs=$epochs \
      --max_step=$STEPS --num_threads=$THREADS --device=$DEVICE --output="$OUT/model_$cell" \
      --log_level=WARNING > "$OUT/edl.txt" 2> "$OUT/edl.err" ||
      { cat "$OUT/edl.err" >&2; die "edl train failed ($cell, run $run)"; }
    read -r e_loss e_steps e_samples e_rate < <(sed -n \
      's/^final: loss \([0-9.na]*\) .*(\([0-9]*\) steps, \([0-9]*\) samples in [0-9.]* s, \([0-9.]*\) samples\/s)$/\1 \2 \3 \4/p' \
      "$OUT/edl.txt") || die "no final: line from edl train: $(cat "$OUT/edl.txt")"
    read -r t_steps t_samples t_rate < <("${torch_env[@]}" $PY scripts/bench/torch_rnn.py "$OUT/seq.csv" $lower \
      $STEPS $THREADS $VOCAB $DEVICE | $PY -c "
import json, sys; j = json.loads(sys.stdin.read())
print(j['steps'], j['samples'], j['train_samples_per_s'])")
    [[ $e_steps == "$STEPS" && $t_steps == "$STEPS" ]] ||
      die "$cell run $run: asked for $STEPS steps; edl ran $e_steps, PyTorch $t_steps"
    printf "%-5s %-8s %4s %6s %9s %12.1f %10s\n" $cell edl $run $e_steps $e_samples $e_rate $e_loss
    printf "%-5s %-8s %4s %6s %9s %12.1f\n" $cell pytorch $run $t_steps $t_samples $t_rate
    echo "$cell edl $e_rate" >> "$RESULTS"
    echo "$cell pytorch $t_rate" >> "$RESULTS"
  done
done
echo "median of $RUNS run(s) on $DEVICE; ratio = edl / PyTorch"
$PY - "$RESULTS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for cell in ("LSTM", "GRU"):
    med = {s: statistics.median(float(r[2]) for r in rows if r[0] == cell and r[1] == s)
           for s in ("edl", "pytorch")}
    print(f"{cell:5s} edl {med['edl']:9.1f}  pytorch {med['pytorch']:9.1f}  ratio {med['edl'] / med['pytorch']:.2f}")
PY
