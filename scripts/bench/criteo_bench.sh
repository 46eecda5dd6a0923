#!/usr/bin/env bash
# Benchmark: data at scale. Writes a Criteo-shaped click data set with planted
# labels (bench/criteo_data.cc: a label, 13 numeric and 26 categorical columns)
# of GB gigabytes of CSV in SHARDS shards, as gzip CSV and as gzip TFRecord of
# tf.train.Examples (the same rows), then trains one epoch of zoo:criteo_deepfm
# (embeddings on the PS) on the local cluster, 2 PS and 2 workers:
#   1. from the gzip CSV shards, streamed;
#   2. from the gzip TFRecord shards, streamed;
#   3. on the first KEEP shards only, streamed and with --data_in_memory (the
#      same records decoded once, held by every worker), for the ratio:
#      REPEAT (default 3) pairs, alternating, and the median ratio (one run
#      varies by several percent on a shared machine). FULL=0 skips 1 and 2.
# Before the jobs it builds the shards' record indexes (edl data index). Prints
# for each run the training throughput (first task to last report),
# the final evaluation's AUC against the planted model's, and every process's
# peak RSS (VmHWM). The data set is kept in DIR for reruns (delete DIR/done
# to write it again).
# Usage: [REPEAT=3] [FULL=1] scripts/bench/criteo_bench.sh [GB=10] [SHARDS=16] [DIR=/tmp/edl-criteo] [KEEP=2]
set -euo pipefail
cd "$(dirname "$0")/../.."
GB=${1:-10}
SHARDS=${2:-16}
DIR=${3:-/tmp/edl-criteo}
KEEP=${4:-2}
BUILD_DIR=${BUILD_DIR:-build}
scripts/build.sh edl edl_criteo_data >/dev/null
EDL=$PWD/$BUILD_DIR/edl

if [[ ! -f "$DIR/done" ]]; then
  rm -rf "$DIR"
  mkdir -p "$DIR"
  echo "writing ${GB} GB of CSV rows in $SHARDS shards (and the same rows as TFRecord) to $DIR"
  "$BUILD_DIR/bench/edl_criteo_data" "$DIR" "$GB" "$SHARDS" | tee "$DIR/data.txt"
  touch "$DIR/done"
fi
cat "$DIR/data.txt"
du -sh "$DIR/csv" "$DIR/tfrecord" | sed 's/^/on disk: /'

# The zoo model for CSV, and the same model reading the TFRecord features.
"$EDL" zoo show criteo_deepfm > "$DIR/deepfm_csv.json"
/usr/bin/python3 - "$DIR" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/deepfm_csv.json"))
m["input"]["format"] = "tfrecord"  # the same feature names, read from Examples
json.dump(m, open(d + "/deepfm_tfrecord.json", "w"))
PY
mkdir -p "$DIR/keep-csv"
for ((i = 0; i < KEEP; i++)); do
  ln -sf "$DIR/csv/$(printf 'part-%05d' "$i").csv.gz" "$DIR/keep-csv/"
done

echo "record indexes, built ahead ($(nproc) files at a time):"
"$EDL" data index --rebuild --log_interval=60 "$DIR"/csv/*.csv.gz "$DIR"/csv-valid/*.csv.gz 2>/dev/null | tail -1
"$EDL" data index --rebuild "$DIR"/keep-csv/*.csv.gz > /dev/null 2>&1
"$EDL" data index --rebuild --log_interval=60 "$DIR"/tfrecord/*.tfrecord.gz \
  "$DIR"/tfrecord-valid/*.tfrecord.gz 2>/dev/null | tail -1

JOBS=$(mktemp -d)
trap 'rm -rf "$JOBS"' EXIT
run() {  # NAME MODEL TRAIN VALID [FLAGS...]
  local name=$1 model=$2 train=$3 valid=$4
  shift 4
  local t0=$SECONDS
  "$EDL" train --job_name="$name" --jobs_dir="$JOBS" --model_def="$model" \
    --training_data="$train" --validation_data="$valid" --num_epochs=1 --minibatch_size=512 \
    --num_ps_pods=2 --num_workers=2 --progress_bar=false --log_interval=60 "$@" \
    > "$DIR/$name.out" 2> "$DIR/$name.err"
  /usr/bin/python3 - "$DIR/$name.out" "$DIR/$name.err" "$name" $((SECONDS - t0)) <<'PY'
import re, sys
out, err, name, wall = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3], sys.argv[4]
rate = re.search(r"training: (\d+) records in ([\d.]+) s, (\d+) records/s", out)
auc = re.findall(r"evaluation at version \d+: .*?auc ([\d.]+)", out)
peaks = dict(re.findall(r"(master|ps-\d|worker-\d): peak RSS ([\d.]+) MiB", err))
print("%-22s %10s rec %8s s %9s rec/s  AUC %s  wall %s s" % (
    name, rate.group(1) if rate else "?", rate.group(2) if rate else "?",
    rate.group(3) if rate else "?", auc[-1] if auc else "?", wall))
print("%-22s peak RSS MiB: %s" % ("", ", ".join("%s %s" % kv for kv in sorted(peaks.items()))))
PY
}

echo "one epoch of zoo:criteo_deepfm, 2 PS + 2 workers on the local cluster ($(nproc) cores)"
if [[ "${FULL:-1}" == 1 ]]; then
  run csv-streamed "$DIR/deepfm_csv.json" "$DIR/csv/" "$DIR/csv-valid/"
  run tfrecord-streamed "$DIR/deepfm_tfrecord.json" "$DIR/tfrecord/" "$DIR/tfrecord-valid/"
fi
REPEAT=${REPEAT:-3}
for ((k = 1; k <= REPEAT; k++)); do
  run "keep-streamed-$k" "$DIR/deepfm_csv.json" "$DIR/keep-csv/" "$DIR/csv-valid/"
  run "keep-in-memory-$k" "$DIR/deepfm_csv.json" "$DIR/keep-csv/" "$DIR/csv-valid/" --data_in_memory
done
[[ "$REPEAT" -gt 0 ]] || exit 0
/usr/bin/python3 - "$DIR" "$REPEAT" <<'PY'
import re, statistics, sys
d, repeat = sys.argv[1], int(sys.argv[2])
def rate(name):
    return float(re.search(r"(\d+) records/s", open("%s/%s.out" % (d, name)).read()).group(1))
ratios = [rate("keep-streamed-%d" % k) / rate("keep-in-memory-%d" % k) for k in range(1, repeat + 1)]
print("streamed / in memory, same %s records, %d pairs: %s; median %.2f" % (
    re.search(r"training: (\d+) records", open(d + "/keep-streamed-1.out").read()).group(1),
    repeat, " ".join("%.2f" % r for r in ratios), statistics.median(ratios)))
PY
