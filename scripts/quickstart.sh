#!/usr/bin/env bash
# Sets up edl and runs the main job: the zoo CNN on Fashion-MNIST (Debian's
# dataset-fashion-mnist), 3 epochs on the embedded local cluster with 2
# parameter servers and 2 workers. After 1,000 steps one worker is killed
# with SIGKILL, as a preemption would; the master relaunches it and the job
# goes on. It ends with the test accuracy and the data ledger (every record
# of every epoch trained, none lost), and the model exported to
# out/fashion_mnist_model (TF.js model.json + weights.bin + edl checkpoint);
# its checkpoints go to out/fashion_mnist_checkpoints (out/ is ignored by
# git, so the repository stays clean).
# It exits non-zero unless the job succeeded with test accuracy >= 0.90 and
# the ledger shows every record of all 3 epochs trained exactly once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh edl
EDL=./build/edl
D=/usr/share/datasets/fashion-mnist
JOB=fashion_mnist
OUT=out
mkdir -p $OUT
rm -rf $OUT/fashion_mnist_checkpoints  # a fresh job: the PS would resume from old ones
report=$(mktemp)
trap 'rm -f "$report"' EXIT

$EDL train --job_name=$JOB --model_def=zoo:fashion_mnist_cnn \
  --training_data=$D/train-images-idx3-ubyte.gz \
  --validation_data=$D/t10k-images-idx3-ubyte.gz \
  --num_ps_pods=2 --num_workers=2 --num_epochs=3 \
  --checkpoint_dir=$OUT/fashion_mnist_checkpoints --checkpoint_steps=500 --keep_checkpoint_max=2 \
  --output=$OUT/fashion_mnist_model "$@" > "$report" &
job=$!

# Wait for 1,000 model versions, then kill worker-0 the hard way.
status_field() {  # status_field EXPR: evaluates EXPR on the job's status JSON
  $EDL status $JOB 2>/dev/null | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)" \
    2>/dev/null || true
}
while kill -0 $job 2>/dev/null; do
  version=$(status_field 's["model_version"]')
  if [[ -n "$version" && "$version" -ge 1000 ]]; then
    pid=$(status_field '[w["pid"] for w in s["workers"] if w["name"] == "worker-0"][0]')
    if [[ -n "$pid" ]]; then
      echo "quickstart: killing worker-0 (pid $pid) with SIGKILL at model version $version" >&2
      kill -9 "$pid"
    fi
    break
  fi
  sleep 2
done
status=0
wait $job || status=$?
cat "$report"  # the job's report: ledger and final evaluation
if [[ $status -ne 0 ]]; then
  echo "quickstart: FAILED: the job exited with status $status" >&2
  exit 1
fi
# The job's report (stdout): one ledger line per epoch, then the final
# evaluation ("... accuracy 0.9123 ...").
python3 - "$report" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
epochs = re.findall(r"^epoch (\d+): (\d+)/(\d+) records trained, (\d+) missing, (\d+) trained twice or more$",
                    text, re.M)
problems = []
if len(epochs) != 3:
    problems.append("expected the ledger of 3 epochs, found %d" % len(epochs))
for e, trained, total, missing, twice in epochs:
    if trained != total or missing != "0" or twice != "0":
        problems.append("epoch %s: %s/%s records trained, %s missing, %s trained twice"
                        % (e, trained, total, missing, twice))
acc = re.findall(r"\baccuracy (\d+(?:\.\d+)?)", text)
if not acc:
    problems.append("no test accuracy in the job's report")
elif float(acc[-1]) < 0.90:
    problems.append("test accuracy %s is below 0.90" % acc[-1])
if problems:
    for p in problems:
        print("quickstart: FAILED: " + p, file=sys.stderr)
    sys.exit(1)
print("quickstart: OK: test accuracy %s >= 0.90; every record of all 3 epochs trained "
      "exactly once" % acc[-1], file=sys.stderr)
PY
