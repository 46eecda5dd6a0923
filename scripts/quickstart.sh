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
# the ledger shows every record of all 3 epochs trained exactly once; unless
# worker-0 really was killed (and relaunched); and unless the processes
# streamed the data instead of holding it: the master's peak RSS must be
# below the data set's uncompressed size (training and validation IDX files,
# 52.4 MiB), each worker's below that size on top of the memory a worker
# needs without data (QUICKSTART_WORKER_BASE_MIB, 100 MiB: its code, the
# model, activations; measured 96-130 MiB).
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
log=$(mktemp)  # the job's log (stderr), shown as it comes and read at the end
trap 'rm -f "$report" "$log"' EXIT

$EDL train --job_name=$JOB --model_def=zoo:fashion_mnist_cnn \
  --training_data=$D/train-images-idx3-ubyte.gz \
  --validation_data=$D/t10k-images-idx3-ubyte.gz \
  --num_ps_pods=2 --num_workers=2 --num_epochs=3 \
  --checkpoint_dir=$OUT/fashion_mnist_checkpoints --checkpoint_steps=500 --keep_checkpoint_max=2 \
  --output=$OUT/fashion_mnist_model "$@" > "$report" 2> "$log" &
job=$!
tail -n +1 -f --pid=$job "$log" >&2 &
shown=$!

# Wait for 1,000 model versions, then kill worker-0 the hard way.
status_field() {  # status_field EXPR: evaluates EXPR on the job's status JSON
  $EDL status $JOB 2>/dev/null | python3 -c "import json,sys; s=json.load(sys.stdin); print($1)" \
    2>/dev/null || true
}
killed=""  # why not, until worker-0 is killed
while kill -0 $job 2>/dev/null; do
  version=$(status_field 's["model_version"]')
  if [[ -n "$version" && "$version" -ge 1000 ]]; then
    pid=$(status_field '[w["pid"] for w in s["workers"] if w["name"] == "worker-0"][0]')
    if [[ -z "$pid" ]]; then
      killed="\`edl status $JOB\` gave no pid for worker-0"
    else
      echo "quickstart: killing worker-0 (pid $pid) with SIGKILL at model version $version" >&2
      if kill -9 "$pid"; then killed="yes"; else killed="kill -9 $pid failed"; fi
    fi
    break
  fi
  sleep 2
done
status=0
wait $job || status=$?
wait $shown || true
cat "$report"  # the job's report: ledger and final evaluation
if [[ $status -ne 0 ]]; then
  echo "quickstart: FAILED: the job exited with status $status" >&2
  exit 1
fi
if [[ "$killed" != "yes" ]]; then
  echo "quickstart: FAILED: worker-0 was not killed (${killed:-the job ended before model version 1000})," \
    "so the job's recovery from a lost worker went untested" >&2
  exit 1
fi
if ! grep -q "supervisor: worker-0 (incarnation [0-9]*) killed by signal 9; relaunching" "$log"; then
  echo "quickstart: FAILED: worker-0 was sent SIGKILL, but the job's log does not show it killed" \
    "by signal 9 and relaunched" >&2
  exit 1
fi
# Streaming: peak RSS against the data set's uncompressed size (the IDX
# headers' sizes), from the "NAME: peak RSS X MiB" line each process logs.
python3 - "$log" "${QUICKSTART_WORKER_BASE_MIB:-100}" $D/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz <<'PY'
import gzip, re, struct, sys
log, base, files = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
size = 0
for path in files:
    with gzip.open(path) as f:
        head = f.read(4)
        dims = struct.unpack(">%dI" % head[3], f.read(4 * head[3]))
    records = 1
    for d in dims:
        records *= d
    size += 4 + 4 * len(dims) + records
data = size / 2**20
peaks = dict(re.findall(r"^(?:\[[\w-]+\] )?\S+ INFO (master|worker-\d+): peak RSS ([\d.]+) MiB$",
                        open(log).read(), re.M))
problems = []
workers = {k: float(v) for k, v in peaks.items() if k.startswith("worker-")}
if "master" not in peaks or len(workers) < 2:
    problems.append("expected the peak RSS of the master and 2 workers in the job's log, found %s"
                    % (", ".join(sorted(peaks)) or "none"))
if "master" in peaks and float(peaks["master"]) >= data:
    problems.append("the master's peak RSS %s MiB is not below the data set's %.1f MiB"
                    % (peaks["master"], data))
for name, mib in sorted(workers.items()):
    if mib >= base + data:
        problems.append("%s's peak RSS %.1f MiB is not below the data set's %.1f MiB on top of "
                        "%.0f MiB for a worker without data: does it hold the data set?"
                        % (name, mib, data, base))
if problems:
    for p in problems:
        print("quickstart: FAILED: " + p, file=sys.stderr)
    sys.exit(1)
print("quickstart: peak RSS: master %s MiB, %s; the data set is %.1f MiB uncompressed"
      % (peaks["master"], ", ".join("%s %.1f MiB" % kv for kv in sorted(workers.items())), data),
      file=sys.stderr)
PY
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
print("quickstart: OK: test accuracy %s >= 0.90; the ledger counts every record of all 3 "
      "epochs trained once (and the PS applied each pushed minibatch of the killed worker's "
      "task once: tests/cmd/applied_once_test.cc checks that with a model that counts its "
      "own updates)" % acc[-1], file=sys.stderr)
PY
