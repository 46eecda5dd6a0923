#!/usr/bin/env bash
# Experiment: how fast an AllreduceStrategy job notices a lost worker and
# re-forms its ring (docs/allreduce.md, 'Measured'). Trains the zoo CNN on
# Fashion-MNIST with 3 workers on the local cluster and, every ~150 steps,
# takes one worker away: KILLS times with SIGKILL (the dead process's sockets
# close at once), then once with SIGSTOP (a silent process: only the master's
# heartbeat timeout, 2 s, can tell). From the job's log it prints, per event:
#   detect  = first survivor's failed step - the signal
#   reform  = last survivor's "ring ... formed (the last step failed)" - that
#   rejoin  = the relaunched worker's first ring - the signal
#   redone  = steps redone by survivors for that event (at most one each)
# Usage: scripts/experiments/allreduce_failover.sh [--build DIR] [--kills N]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=build
KILLS=4
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --kills) KILLS=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--kills N]" >&2; exit 2 ;;
  esac
done
EDL=$BUILD/edl
[[ -x $EDL ]] || { echo "allreduce_failover.sh: $EDL not built" >&2; exit 1; }
D=/usr/share/datasets/fashion-mnist
WORK=$(mktemp -d)
trap 'kill $job 2>/dev/null || true; rm -rf "$WORK"' EXIT
JOB=failover

"$EDL" train --distribution_strategy=AllreduceStrategy --job_name=$JOB --jobs_dir="$WORK" \
  --model_def=zoo:fashion_mnist_cnn --training_data=$D/train-images-idx3-ubyte.gz \
  --validation_data=$D/t10k-images-idx3-ubyte.gz --num_epochs=3 --num_workers=3 \
  --minibatch_size=32 --grace_period=5 >"$WORK/out" 2>"$WORK/err" &
job=$!

field() {  # field EXPR: EXPR over the job's status JSON, "" when unreachable
  "$EDL" status $JOB --jobs_dir="$WORK" 2>/dev/null |
    python3 -c "import json,sys; s=json.load(sys.stdin); print($1)" 2>/dev/null || true
}
wait_version() {  # wait_version N: until the model version reaches N
  while kill -0 $job 2>/dev/null; do
    v=$(field 's["model_version"]')
    [[ -n $v && $v -ge $1 ]] && return 0
    sleep 0.2
  done
  return 1
}
victim() {  # a worker's pid, round robin over worker-0..2
  field "[w['pid'] for w in s['workers'] if w['name'] == 'worker-$1' and not w.get('stopping')][0]"
}

: >"$WORK/events"
next=150
for ((i = 0; i <= KILLS; i++)); do
  wait_version $next || break
  pid=$(victim $((i % 3)))
  [[ -n $pid ]] || { next=$((next + 50)); continue; }
  if ((i < KILLS)); then
    echo "SIGKILL $(date +%s.%N) $pid" >>"$WORK/events"
    kill -9 "$pid"
  else
    echo "SIGSTOP $(date +%s.%N) $pid" >>"$WORK/events"
    kill -STOP "$pid"
    sleep 6  # the survivors must go on without it meanwhile
    kill -9 "$pid"; kill -CONT "$pid" 2>/dev/null || true
  fi
  next=$(($(field 's["model_version"]') + 150))
done
wait $job && status=0 || status=$?
echo "job exit status: $status"
grep -E "records trained|accuracy" "$WORK/out" || true

python3 - "$WORK/events" "$WORK/err" <<'EOF'
import re, sys, statistics
from datetime import datetime, timezone
events = [l.split() for l in open(sys.argv[1])]
log = open(sys.argv[2]).read().splitlines()
def t(line):
    m = re.search(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z", line)
    return datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=timezone.utc).timestamp() if m else None
failed = [(t(l), l) for l in log if "failed after" in l and "WARNING worker-" in l]
formed = [(t(l), l) for l in log if "formed (the last step failed)" in l]
first = [(t(l), l) for l in log if "formed (first ring)" in l]
print(f"{'event':8} {'detect ms':>10} {'reform ms':>10} {'rejoin ms':>10} {'redone':>7}")
rows = []
for n, (kind, when, pid) in enumerate(events):
    t0 = float(when)
    t1 = float(events[n + 1][1]) if n + 1 < len(events) else float("inf")
    f = [x for x, _ in failed if x is not None and t0 - 0.5 <= x < t1]
    if not f:
        print(f"{kind:8} {'-':>10} {'-':>10} {'-':>10} {0:>7}  (no step failed)")
        continue
    d = min(f)
    r = [x for x, _ in formed if x is not None and d <= x < min(t1, d + 30)]
    j = [x for x, _ in first if x is not None and t0 < x < t1]
    row = ((d - t0) * 1000, ((max(r) - d) * 1000) if r else float("nan"),
           ((min(j) - t0) * 1000) if j else float("nan"), len(f))
    rows.append((kind, row))
    print(f"{kind:8} {row[0]:10.0f} {row[1]:10.0f} {row[2]:10.0f} {row[3]:7d}")
kills = [r for k, r in rows if k == "SIGKILL"]
if kills:
    print("SIGKILL: detect median %.0f ms (max %.0f), re-form median %.0f ms (max %.0f)" % (
        statistics.median(r[0] for r in kills), max(r[0] for r in kills),
        statistics.median(r[1] for r in kills), max(r[1] for r in kills)))
EOF
exit $status
