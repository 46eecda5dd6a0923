#!/usr/bin/env bash
# Benchmark: training from a database table against the same rows in CSV
# files (docs/performance.md, "Training from a database table").
#   1. Writes Criteo-shaped click rows with planted labels (bench/criteo_data.cc:
#      a label, 13 numeric, 26 categorical columns) as gzip CSV shards, GB
#      gigabytes of CSV (3.3 GB: about 10 M rows).
#   2. Starts a PostgreSQL server of its own (Debian's postgresql: initdb into
#      DIR/pg, as user postgres when run as root, on a free loopback port,
#      trust authentication, fsync off: a benchmark's server) and loads the
#      rows into table criteo (id bigserial primary key, then the CSV's
#      columns) with psql's \copy; the first 1 M rows also into a SQLite file
#      with the sqlite3 tool.
#   3. One reader streaming every row of the PostgreSQL table, and of the
#      SQLite one, into the criteo_deepfm model's inputs on one thread
#      (bench/sql_read_bench.cc): records/s and MB/s of the table's size.
#   4. One epoch of zoo:criteo_deepfm (minibatch 512, 2 PS, 2 workers, the
#      local cluster) from the CSV shards, streamed, and from the table;
#      REPEAT (default 1) alternating pairs: training records/s, the ratio,
#      the CPU seconds of the job's processes and of the database server
#      during the job, every process's peak RSS (VmHWM).
#   5. The master's planning time for a table of PLAN_ROWS rows (default
#      100 M; 0 skips): its dense primary key (min, max, count) and the same
#      rows read as a query by the same key (the key-only scan).
# The data and the server's directory stay in DIR for reruns (delete DIR to
# start over); the server is stopped on exit.
# Usage: [REPEAT=1] [PLAN_ROWS=100000000] scripts/bench/sql_bench.sh [GB=3.3] [DIR=/tmp/edl-sql-bench]
set -euo pipefail
cd "$(dirname "$0")/../.."
GB=${1:-3.3}
DIR=${2:-/tmp/edl-sql-bench}
REPEAT=${REPEAT:-1}
PLAN_ROWS=${PLAN_ROWS:-100000000}
BUILD_DIR=${BUILD_DIR:-build}
[[ -x /usr/bin/time ]] || { echo "sql_bench.sh needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }
scripts/build.sh edl edl_criteo_data edl_sql_read_bench >/dev/null
EDL=$PWD/$BUILD_DIR/edl
READ=$PWD/$BUILD_DIR/bench/edl_sql_read_bench
mkdir -p "$DIR"

if [[ ! -f "$DIR/data/done" ]]; then
  rm -rf "$DIR/data"
  mkdir -p "$DIR/data"
  echo "writing ${GB} GB of Criteo-shaped CSV rows to $DIR/data"
  "$BUILD_DIR/bench/edl_criteo_data" "$DIR/data" "$GB" 8 | tee "$DIR/data/data.txt"
  rm -rf "$DIR/data/tfrecord" "$DIR/data/tfrecord-valid"
  touch "$DIR/data/done"
fi
cat "$DIR/data/data.txt"

# ---- the server ----
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
AS=()
if [[ $(id -u) -eq 0 ]]; then AS=(runuser -u postgres --); fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [[ ! -d "$DIR/pg/data" ]]; then
  mkdir -p "$DIR/pg"
  [[ ${#AS[@]} -gt 0 ]] && chown postgres "$DIR/pg"
  "${AS[@]}" "$PG_BIN/initdb" -D "$DIR/pg/data" -U postgres --auth=trust --no-sync -E UTF8 >/dev/null
fi
"${AS[@]}" "$PG_BIN/pg_ctl" -D "$DIR/pg/data" -l "$DIR/pg/log" -w -o \
  "-p $PORT -k $DIR/pg -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c shared_buffers=1GB -c max_wal_size=8GB" \
  start >/dev/null
trap '"${AS[@]}" "$PG_BIN/pg_ctl" -D "$DIR/pg/data" -m fast -w stop >/dev/null' EXIT
PSQL=(psql -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d postgres)
DB="postgresql://postgres@127.0.0.1:$PORT/postgres"

COLUMNS="label integer"
NAMES="label"
for j in $(seq 1 13); do COLUMNS+=", \"I$j\" double precision"; NAMES+=", \"I$j\""; done
for k in $(seq 1 26); do COLUMNS+=", \"C$k\" text"; NAMES+=", \"C$k\""; done
if [[ $("${PSQL[@]}" -c "SELECT to_regclass('criteo') IS NOT NULL") != t ]]; then
  echo "loading the CSV rows into PostgreSQL table criteo"
  t0=$SECONDS
  "${PSQL[@]}" -c "CREATE UNLOGGED TABLE criteo_load (id bigserial PRIMARY KEY, $COLUMNS)"
  for f in "$DIR"/data/csv/part-*.csv.gz; do
    zcat "$f" | tail -n +2 | "${PSQL[@]}" -c "\\copy criteo_load ($NAMES) FROM STDIN CSV"
  done
  "${PSQL[@]}" -c "VACUUM ANALYZE criteo_load"
  "${PSQL[@]}" -c "ALTER TABLE criteo_load RENAME TO criteo"
  echo "loaded in $((SECONDS - t0)) s"
fi
ROWS=$("${PSQL[@]}" -c "SELECT count(*) FROM criteo")
PG_BYTES=$("${PSQL[@]}" -c "SELECT pg_relation_size('criteo')")
echo "table criteo: $ROWS rows, $((PG_BYTES / 1048576)) MiB (heap)"

SQLITE=$DIR/criteo-1m.db
if [[ ! -f $SQLITE ]]; then
  echo "writing the first 1,000,000 rows to SQLite $SQLITE"
  "${PSQL[@]}" -c "\\copy (SELECT * FROM criteo ORDER BY id LIMIT 1000000) TO '$DIR/first.csv' CSV"
  sqlite3 "$SQLITE.tmp" <<SQL
CREATE TABLE criteo (id INTEGER PRIMARY KEY, $(echo "$COLUMNS" | sed 's/double precision/REAL/g'));
.import --csv $DIR/first.csv criteo
SQL
  rm -f "$DIR/first.csv"
  mv "$SQLITE.tmp" "$SQLITE"
fi

"$EDL" zoo show criteo_deepfm > "$DIR/deepfm.json"

# ---- 3. one reader ----
echo
echo "one reader, one thread, into criteo_deepfm's inputs (the server on the same 2 cores):"
read_rate() {  # NAME URL BYTES
  local out
  out=$("$READ" "$2" "$DIR/deepfm.json")
  python3 - "$1" "$3" "$out" <<'PY'
import re, sys
name, size, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
plan = re.search(r"plan: (\d+) records in ([\d.]+) s", out)
read = re.search(r"read: (\d+) records in ([\d.]+) s \((\d+) records/s\), reader CPU ([\d.]+) s", out)
n, s, cpu = int(read.group(1)), float(read.group(2)), float(read.group(4))
print("%-28s %10d rows  plan %5.2f s  read %7.2f s  %9.0f rows/s  %6.1f MB/s  reader CPU %5.1f s (%.0f rows per CPU-s)"
      % (name, n, float(plan.group(2)), s, n / s, size / s / 1e6, cpu, n / cpu))
PY
}
read_rate "PostgreSQL table" "$DB?table=criteo" "$PG_BYTES"
read_rate "SQLite table (1 M rows)" "sqlite:$SQLITE?table=criteo" "$(stat -c %s "$SQLITE")"

# ---- 4. training ----
JOBS=$(mktemp -d)
trap 'rm -rf "$JOBS"; "${AS[@]}" "$PG_BIN/pg_ctl" -D "$DIR/pg/data" -m fast -w stop >/dev/null' EXIT
# The database server's CPU seconds so far: its postmaster's own and those
# of its ended backends (which it reaps), from /proc.
server_cpu() {
  local pid
  pid=$(head -1 "$DIR/pg/data/postmaster.pid")
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15 + $16 + $17) / hz}' "/proc/$pid/stat"
}
train() {  # NAME DATA
  local name=$1 data=$2
  rm -rf "${JOBS:?}/$name"  # a job directory left by the last pair would be taken for a restart
  local server0
  server0=$(server_cpu)
  # The job's CPU: edl train and every process of its job, which it reaps.
  /usr/bin/time -f "job CPU %U %S" -o "$DIR/$name.cpu" \
    "$EDL" train --job_name="$name" --jobs_dir="$JOBS" --model_def=zoo:criteo_deepfm \
    --training_data="$data" --num_epochs=1 --minibatch_size=512 --num_ps_pods=2 \
    --num_workers=2 --progress_bar=false --log_interval=60 > "$DIR/$name.out" 2> "$DIR/$name.err"
  local server=0
  if [[ $name == postgresql ]]; then server=$(python3 -c "print($(server_cpu) - $server0)"); fi
  python3 - "$DIR/$name.out" "$DIR/$name.err" "$name" "$DIR/$name.cpu" "$server" <<'PY'
import re, sys
out, err, name = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
user, system = map(float, re.search(r"job CPU ([\d.]+) ([\d.]+)", open(sys.argv[4]).read()).groups())
server = float(sys.argv[5])
rate = re.search(r"training: (\d+) records in ([\d.]+) s, (\d+) records/s", out)
peaks = dict(re.findall(r"(master|ps-\d|worker-\d): peak RSS ([\d.]+) MiB", err))
n = int(rate.group(1))
print("%-14s %10s records %8s s %9s records/s   CPU: job %.0f s + server %.0f s = %.1f us a record"
      "   peak RSS MiB: %s" % (
    name, rate.group(1), rate.group(2), rate.group(3), user + system, server,
    (user + system + server) / n * 1e6, ", ".join("%s %s" % kv for kv in sorted(peaks.items()))))
open(sys.argv[1] + ".rate", "w").write(rate.group(3))
PY
}
echo
echo "one epoch of zoo:criteo_deepfm, 2 PS + 2 workers, minibatch 512:"
ratios=()
for ((i = 1; i <= REPEAT; i++)); do
  train csv "$DIR/data/csv"
  train postgresql "$DB?table=criteo"
  ratios+=("$(python3 -c "print('%.2f' % ($(cat "$DIR/postgresql.out.rate") / $(cat "$DIR/csv.out.rate")))")")
done
echo "table / CSV records/s, per pair: ${ratios[*]}"

# ---- 5. planning ----
if ((PLAN_ROWS > 0)); then
  if [[ $("${PSQL[@]}" -c "SELECT to_regclass('plan_rows') IS NOT NULL") != t ]]; then
    echo
    echo "writing table plan_rows: $PLAN_ROWS rows"
    t0=$SECONDS
    "${PSQL[@]}" -c "CREATE UNLOGGED TABLE plan_load (id bigint, label integer, x double precision)"
    "${PSQL[@]}" -c "INSERT INTO plan_load SELECT g, g % 2, g * 0.001 FROM generate_series(1, $PLAN_ROWS) g"
    "${PSQL[@]}" -c "ALTER TABLE plan_load ADD PRIMARY KEY (id)"
    "${PSQL[@]}" -c "VACUUM ANALYZE plan_load"
    "${PSQL[@]}" -c "ALTER TABLE plan_load RENAME TO plan_rows"
    echo "written in $((SECONDS - t0)) s"
  fi
  echo '{"input": {"label": "label"}}' > "$DIR/plan.json"
  echo
  echo "planning a table of $PLAN_ROWS rows (what the master does before any task):"
  echo "  dense primary key (min, max, count): $("$READ" "$DB?table=plan_rows" "$DIR/plan.json" --plan_only)"
  echo "  the same rows as a query by its key (key-only scan): $("$READ" "$DB?query=SELECT%20*%20FROM%20plan_rows&key=id" "$DIR/plan.json" --plan_only)"
fi
