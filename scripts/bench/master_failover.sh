#!/usr/bin/env bash
# How long a job stands still when its master dies (docs/distributed.md, 'A
# master that survives its own death'), on the local cluster: trains the zoo
# CNN on Fashion-MNIST (2 PS, 2 workers, 2 epochs) and kills the master with
# SIGKILL KILLS times, every INTERVAL seconds. For each death it prints the
# time from the death (the job host's log line saying so, within 20 ms of it)
# to the new master's first task handed out ("dispatching again"), and at the
# end the records trained more than once (the ledger) and the test accuracy.
#
# Usage: scripts/bench/master_failover.sh [KILLS=5] [INTERVAL=6]
set -euo pipefail
cd "$(dirname "$0")/../.."
KILLS=${1:-5}
INTERVAL=${2:-6}
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
scripts/build.sh edl >/dev/null
EDL=$BUILD_DIR/edl
D=/usr/share/datasets/fashion-mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

$EDL train --job_name=failover --jobs_dir="$work" --model_def=zoo:fashion_mnist_cnn \
  --training_data=$D/train-images-idx3-ubyte.gz --validation_data=$D/t10k-images-idx3-ubyte.gz \
  --num_ps_pods=2 --num_workers=2 --num_epochs=2 --log_interval=5 \
  > "$work/out" 2> "$work/err" &
job=$!
master_pid() {
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pid'])" \
    "$work/failover/master.json" 2>/dev/null || true
}
restarts() {
  $EDL status failover --jobs_dir="$work" 2>/dev/null |
    python3 -c "import json,sys; print(json.load(sys.stdin)['master_restarts'])" 2>/dev/null || true
}
# Once training is under way, then every INTERVAL s.
until [[ "$(restarts)" == "0" ]]; do sleep 0.5; done
sleep "$INTERVAL"
for ((i = 1; i <= KILLS; ++i)); do
  pid=$(master_pid)
  kill -0 $job 2>/dev/null || break
  echo "master_failover: killing the master (pid $pid), death $i of $KILLS" >&2
  kill -9 "$pid"
  until [[ "$(restarts)" == "$i" ]]; do
    kill -0 $job 2>/dev/null || break
    sleep 0.2
  done
  sleep "$INTERVAL"
done
status=0
wait $job || status=$?
if [[ $status -ne 0 ]]; then
  tail -30 "$work/err" >&2
  echo "master_failover: the job failed (exit $status)" >&2
  exit 1
fi
python3 - "$work/out" "$work/err" <<'PY'
import datetime, re, sys
out, err = open(sys.argv[1]).read(), open(sys.argv[2]).read()
def t(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f")
deaths = [t(m) for m in re.findall(r"^(\S+)Z WARNING job host: the master .* was killed", err, re.M)]
again = [t(m) for m in re.findall(r"^(\S+)Z INFO dispatching again", err, re.M)]
gaps = []
for d in deaths:
    after = [a for a in again if a >= d]
    if after:
        gaps.append((min(after) - d).total_seconds())
print("master deaths: %d, dispatching again after (s): %s" % (
    len(deaths), ", ".join("%.3f" % g for g in gaps)))
if gaps:
    s = sorted(gaps)
    print("median %.3f s, max %.3f s" % (s[len(s) // 2], s[-1]))
twice = sum(int(n) for n in re.findall(r"trained, \d+ missing, (\d+) trained twice", out))
missing = sum(int(n) for n in re.findall(r"records trained, (\d+) missing", out))
acc = re.findall(r"accuracy ([0-9.]+)", out)
print("records trained more than once: %d, missing: %d, test accuracy %s" % (
    twice, missing, acc[-1] if acc else "?"))
print([l for l in out.splitlines() if l.startswith("master replaced")])
PY
