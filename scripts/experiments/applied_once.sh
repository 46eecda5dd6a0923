#!/usr/bin/env bash
# Experiment: is each record's gradient applied to the model exactly once
# per epoch when processes are killed mid-task? The oracle is the model's
# own weights, read here with Python's struct module from the TF.js export
# (no edl code): a one-column Embedding over the record id, initialised to
# zeros, trained by SGD with learning rate = the minibatch size on a mean
# absolute error against a label far above it, gains exactly 1.0 in a
# record's row each time that record's gradient is applied. After E epochs
# every row must hold E.
#
# Usage: [RECORDS=65536] [EPOCHS=4] [WORKER_KILLS=3] [PS_KILLS=0] [NUM_PS=2]
#        [NUM_WORKERS=2] [CHECKPOINT_STEPS=200] [BUILD_DIR=build]
#        scripts/experiments/applied_once.sh
# Prints the histogram "times applied: rows", the job's ledger lines (the
# records redone for a restored PS among them) and the master's redo
# lines; exits 1 when some row is not EPOCHS.
set -euo pipefail
cd "$(dirname "$0")/../.."
EDL=$(realpath "${BUILD_DIR:-build}/edl")
N=${RECORDS:-65536}
EPOCHS=${EPOCHS:-4}
WORKER_KILLS=${WORKER_KILLS:-3}
PS_KILLS=${PS_KILLS:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 - "$TMP" "$N" <<'PY'
import sys
tmp, n = sys.argv[1], int(sys.argv[2])
with open(f"{tmp}/train.csv", "w") as f:
    f.write("rid,label\n")
    f.writelines(f"{i},1000000\n" for i in range(n))
PY
cat >"$TMP/spec.json" <<JSON
{
  "model": {"class_name": "Sequential", "config": {"name": "counter", "layers": [
    {"class_name": "InputLayer", "config": {"batch_input_shape": [null], "dtype": "int64", "name": "rid"}},
    {"class_name": "Embedding", "config": {"name": "applied", "input_dim": $N, "output_dim": 1,
      "embeddings_initializer": "zeros"}},
    {"class_name": "Flatten", "config": {}}]}},
  "loss": "mean_absolute_error",
  "optimizer": {"class_name": "SGD", "config": {"learning_rate": 32}},
  "input": {"format": "csv", "label": "label", "label_type": "float",
            "categorical": [{"column": "rid", "num_buckets": $N}]}
}
JSON
"$EDL" train --model_def="$TMP/spec.json" --training_data="$TMP/train.csv" \
  --num_epochs="$EPOCHS" --minibatch_size=32 --num_ps_pods="${NUM_PS:-2}" \
  --num_workers="${NUM_WORKERS:-2}" --jobs_dir="$TMP/jobs" --job_name=once \
  --checkpoint_dir="$TMP/ckpt" --checkpoint_steps="${CHECKPOINT_STEPS:-200}" --output="$TMP/out" \
  >"$TMP/out.log" 2>"$TMP/err.log" &
job=$!
# Kills at spread-out moments: a worker (or PS) chosen in turn, SIGKILL.
kill_one() {
  local pattern=$1 pid
  pid=$(pgrep -f -- "$pattern" | head -1 || true)
  if [[ -z $pid ]]; then echo "applied_once: no process matches '$pattern'" >&2; return 1; fi
  kill -9 "$pid"
  echo "applied_once: killed $pid ($pattern)" >&2
}
sleep 1.5
for i in $(seq "$WORKER_KILLS"); do
  kill_one "edl worker --job_name=once .*--worker_name=worker-$((i % 2))" || true
  sleep 1.2
done
for i in $(seq "$PS_KILLS"); do
  kill_one "edl ps --job_name=once .*--ps_index=$((i % ${NUM_PS:-2}))" || true
  sleep 1.2
done
wait "$job" || { echo "applied_once: the job failed" >&2; tail -5 "$TMP/err.log" >&2; exit 1; }
grep -E "^epoch [0-9]+:" "$TMP/out.log" || true
grep -cE "killed by signal 9; relaunching" "$TMP/err.log" | sed 's/^/applied_once: processes killed and relaunched: /' || true
grep -ohE "ps-[0-9]+ came back without .*" "$TMP/err.log" | sed 's/^/applied_once: /' || true
grep -cE "PS had this minibatch already" "$TMP/err.log" | sed 's/^/applied_once: retried tasks resumed after minibatches the PS had: /' || true
python3 - "$TMP/out/weights.bin" "$EPOCHS" <<'PY'
import collections, struct, sys
data = open(sys.argv[1], "rb").read()
rows = struct.unpack("<%df" % (len(data) // 4), data)
counts = collections.Counter(rows)
for times in sorted(counts):
    print(f"applied {times:g} times: {counts[times]} records")
sys.exit(0 if set(counts) == {float(sys.argv[2])} else 1)
PY
