#!/usr/bin/env bash
# Benchmark: edl vs PyTorch CPU (Debian python3-torch) on the zoo Fashion-MNIST
# MLP and CNN: batch 64, Adam, THREADS threads, the same number of steps on
# both sides. Each configuration runs RUNS times (edl and PyTorch alternating);
# prints every run, then the median and spread (min-max) of each side and the
# ratio of the medians.
#
# Usage: scripts/bench/bench_zoo.sh [THREADS=2] [MLP_STEPS=10000] [CNN_STEPS=300] [RUNS=3]
#
# What each figure covers:
# * steps / samples: what each side actually trained, read back from its own
#   report (edl: the `final:` line of `edl train`; PyTorch: torch_zoo.py's
#   JSON). The script fails if the two sides differ. Both run epochs of
#   ceil(60000/64) = 938 batches over a fresh permutation, the last batch of an
#   epoch holding 32 records, so 10,000 steps are 639,680 samples on each side.
#   edl stops at the end of --num_epochs even when --max_step is larger, so it
#   is given ceil(steps/938) epochs and --max_step binds.
# * train samp/s: samples / seconds over all the steps, the first included:
#   neither side excludes a warm-up (edl's `final:` figure cannot, so
#   torch_zoo.py does not either). The span starts before the first step and
#   ends after the last; it leaves out start-up, data loading, model
#   construction and (edl) export. Per step, both: gather the shuffled batch
#   from uint8, decode to float32 / 255, forward, cross-entropy, read the loss,
#   backward, Adam with the zoo's cosine-decayed rate, accuracy metric.
# * infer samp/s: the 60,000 training images in batches of 256, decode,
#   forward, loss and accuracy (edl: `edl evaluate`'s records/s on the exported
#   model, timed after loading; PyTorch: the trained model under no_grad).
#   `edl evaluate` runs one thread more than its THREADS compute threads: a
#   reader that decodes the next batches while the current one computes;
#   PyTorch decodes each batch in its main thread between forwards. So that
#   this extra thread gets no CPU of its own, each side's every process
#   (training and inference) runs pinned to the same THREADS CPUs (taskset):
#   the reader's time comes out of the same CPU budget as PyTorch's decoding.
# * peak MiB: maximum resident memory (ru_maxrss) over start-up, data loading
#   and training (edl: the whole `edl train` process, via peak_rss.py; PyTorch:
#   read right after training, so its in-process inference is left out).
# * data MiB: what the training set held in memory takes. Both sides hold it
#   the same way by default: the IDX payloads as uint8 (images 60000x784 =
#   44.9 MiB, labels 0.06 MiB), decoded to float32 per batch (edl:
#   data/idx_source.h). TORCH_DATA=float32 makes PyTorch hold the images
#   pre-decoded as float32 (179.4 MiB) and labels as int64, as this benchmark
#   did before; the data column then shows the difference to subtract.
#   "torch base MiB" is PyTorch's resident size right after `import torch`:
#   the runtime's share of its peak.
#
# PyTorch runs with Debian's OpenBLAS (libopenblas0-openmp, installed by
# `scripts/install-deps.sh --bench`) and OPENBLAS_CORETYPE=Cooperlake (its
# best configuration here); set TORCH_BLAS=reference to compare with the
# reference BLAS that python3-torch uses without OpenBLAS.
set -euo pipefail
cd "$(dirname "$0")/../.."
THREADS=${1:-2}
MLP_STEPS=${2:-10000}
CNN_STEPS=${3:-300}
RUNS=${4:-3}
TORCH_DATA=${TORCH_DATA:-uint8}
D=/usr/share/datasets/fashion-mnist
PY=/usr/bin/python3
BATCH=64
scripts/install-deps.sh --bench >/dev/null
scripts/build.sh edl >/dev/null
EDL=./${BUILD_DIR:-build}/edl
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# The CPUs both sides run on: the first THREADS this script may use.
CPUS=$($PY -c "import os, sys; c = sorted(os.sched_getaffinity(0))[:int(sys.argv[1])]
print(','.join(map(str, c)) if len(c) == int(sys.argv[1]) else '')" "$THREADS")
[[ -n $CPUS ]] || { echo "bench_zoo.sh: THREADS=$THREADS but fewer CPUs are usable" >&2; exit 1; }
pin=(taskset -c "$CPUS")

export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Cooperlake}
torch_env=("${pin[@]}" env "OMP_NUM_THREADS=$THREADS")
if [[ "${TORCH_BLAS:-openblas}" == reference ]]; then
  torch_env+=(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas)
else
  torch_env+=(LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp)
fi

die() { echo "bench_zoo.sh: $*" >&2; exit 1; }

# Runs a command, printing its peak RSS (MiB) to $OUT/rss.
peak() { $PY scripts/bench/peak_rss.py "$OUT/rss" "$@"; }

# Records in the training set and what its IDX payloads take in memory (MiB),
# which is how edl holds them.
read -r N EDL_DATA_MIB < <($PY - "$D" <<'EOF'
import gzip, struct, sys
def dims(p):
    with gzip.open(p) as f:
        h = f.read(4)
        return struct.unpack(">%dI" % h[3], f.read(4 * h[3]))
i = dims(sys.argv[1] + "/train-images-idx3-ubyte.gz")
l = dims(sys.argv[1] + "/train-labels-idx1-ubyte.gz")
size = 1
for d in i: size *= d
print(i[0], "%.1f" % ((size + l[0]) / 2**20))
EOF
)
STEPS_PER_EPOCH=$(( (N + BATCH - 1) / BATCH ))

# One line per run: model system run steps samples train infer peak data
RESULTS=$OUT/results.txt
: > "$RESULTS"
printf "%-5s %-8s %3s %6s %8s %14s %14s %9s %9s\n" \
  model system run steps samples "train samp/s" "infer samp/s" "peak MiB" "data MiB"
for model in mlp cnn; do
  steps=$MLP_STEPS; [[ $model == cnn ]] && steps=$CNN_STEPS
  epochs=$(( (steps + STEPS_PER_EPOCH - 1) / STEPS_PER_EPOCH ))
  for run in $(seq 1 "$RUNS"); do
    # edl: `steps` steps (--num_epochs large enough for --max_step to bind),
    # then inference over the 60,000 training images.
    rm -rf "${OUT:?}/$model"
    peak "${pin[@]}" $EDL train --distribution_strategy=Local --model_def=zoo:fashion_mnist_$model \
      --training_data=$D/train-images-idx3-ubyte.gz --minibatch_size=$BATCH \
      --num_epochs=$epochs --max_step=$steps --num_threads=$THREADS --output=$OUT/$model \
      --log_level=WARNING > $OUT/edl_train.txt 2> $OUT/edl_train.err ||
      { cat $OUT/edl_train.err >&2; die "edl train failed ($model, run $run)"; }
    edl_rss=$(cat $OUT/rss)
    # final: loss ... (10000 steps, 639680 samples in 2.3 s, 278000 samples/s)
    read -r edl_steps edl_samples edl_train < <(sed -n \
      's/^final: .*(\([0-9]*\) steps, \([0-9]*\) samples in [0-9.]* s, \([0-9.]*\) samples\/s)$/\1 \2 \3/p' \
      $OUT/edl_train.txt) || die "no final: line from edl train: $(cat $OUT/edl_train.txt)"
    "${pin[@]}" $EDL evaluate --checkpoint_dir_for_init=$OUT/$model --validation_data=$D/train-images-idx3-ubyte.gz \
      --minibatch_size=256 --num_threads=$THREADS > $OUT/edl_eval.txt 2> $OUT/edl_eval.err ||
      { cat $OUT/edl_eval.err >&2; die "edl evaluate failed ($model, run $run)"; }
    read -r edl_records edl_infer < <(sed -n \
      's/^evaluation: .*(\([0-9]*\) records in [0-9.]* s, \([0-9.]*\) records\/s)$/\1 \2/p' \
      $OUT/edl_eval.txt) || die "no evaluation: line from edl evaluate: $(cat $OUT/edl_eval.txt)"

    # PyTorch: the same steps, then inference, in one process.
    "${torch_env[@]}" $PY scripts/bench/torch_zoo.py $model $steps $THREADS $D \
      --data=$TORCH_DATA > $OUT/torch.json || die "torch_zoo.py failed ($model, run $run)"
    read -r t_steps t_samples t_train t_records t_infer t_rss t_data t_base < <($PY -c "
import json; j = json.load(open('$OUT/torch.json'))
print(*(j[k] for k in ('steps', 'samples', 'train_samples_per_s', 'infer_records',
                       'infer_samples_per_s', 'peak_rss_mib', 'data_mib', 'import_rss_mib')))")

    printf "%-5s %-8s %3d %6d %8d %14.0f %14.0f %9.0f %9.1f\n" \
      $model edl $run $edl_steps $edl_samples $edl_train $edl_infer $edl_rss $EDL_DATA_MIB
    printf "%-5s %-8s %3d %6d %8d %14.0f %14.0f %9.0f %9.1f\n" \
      $model pytorch $run $t_steps $t_samples $t_train $t_infer $t_rss $t_data
    [[ $edl_steps == "$steps" && $t_steps == "$steps" ]] ||
      die "$model run $run: asked for $steps steps; edl ran $edl_steps, PyTorch $t_steps"
    [[ $edl_samples == "$t_samples" ]] ||
      die "$model run $run: edl trained on $edl_samples samples, PyTorch on $t_samples"
    [[ $edl_records == "$t_records" ]] ||
      die "$model run $run: edl inferred $edl_records records, PyTorch $t_records"
    echo "$model edl $run $edl_train $edl_infer $edl_rss" >> "$RESULTS"
    echo "$model pytorch $run $t_train $t_infer $t_rss $t_base" >> "$RESULTS"
  done
done

echo
echo "median [min-max] of $RUNS run(s); ratio = edl / PyTorch of the medians"
$PY - "$RESULTS" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
fmt = "%-5s %-8s %24s %24s %18s"
print(fmt % ("model", "system", "train samp/s", "infer samp/s", "peak MiB"))
def cell(v, spec):
    return ("%s [%s-%s]" % (spec, spec, spec)) % (statistics.median(v), min(v), max(v))
for model in dict.fromkeys(r[0] for r in rows):
    med = {}
    for system in ("edl", "pytorch"):
        cols = list(zip(*[[float(x) for x in r[3:6]] for r in rows
                          if r[0] == model and r[1] == system]))
        med[system] = [statistics.median(c) for c in cols]
        print(fmt % (model, system, cell(cols[0], "%.0f"), cell(cols[1], "%.0f"),
                     cell(cols[2], "%.0f")))
    print(fmt % (model, "ratio", *("%.2fx" % (e / t) for e, t in zip(med["edl"], med["pytorch"]))))
base = [float(r[6]) for r in rows if r[1] == "pytorch"]
print("torch base MiB (resident after `import torch`, median): %.0f" % statistics.median(base))
EOF
echo "data: edl holds the training set as its uint8 IDX payloads ($EDL_DATA_MIB MiB), decoded per batch;"
if [[ $TORCH_DATA == uint8 ]]; then
  echo "      PyTorch the same (uint8 tensors, decoded per batch)."
else
  echo "      PyTorch as float32 images + int64 labels (TORCH_DATA=$TORCH_DATA; see data MiB)."
fi
echo "cpus: both sides pinned to CPUs $CPUS (edl evaluate's reader thread included)"
echo "(ratio > 1: edl faster for throughput, uses more memory for peak MiB)"
