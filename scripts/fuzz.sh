#!/usr/bin/env bash
# Builds every libFuzzer target fuzz/*_fuzz.cc with clang++ (ASan + UBSan)
# and runs each for SECONDS (default 30).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 60 net_http
#
# A target lists the repo sources it links in comment lines (all are used):
#   // fuzz-sources: net/http_handling.cc base/status.cc
# Seeds come from fuzz/corpus/<target without _fuzz>/ when present; new inputs
# go to $FUZZ_DIR/corpus/<target>/, crashes to $FUZZ_DIR/crashes/<target>/.
# Env: FUZZ_DIR (default build-fuzz), CXX (default clang++), EDL_BUILD_LOCK
# (a file to flock around each compile on a shared machine).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-30}
shift || true
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
CXX=${CXX:-clang++}
mkdir -p "$FUZZ_DIR"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzz.cc; do
    [ -e "$f" ] || continue
    t=$(basename "$f" .cc)
    targets+=("${t%_fuzz}")
  done
fi

status=0
for t in "${targets[@]}"; do
  src="fuzz/${t}_fuzz.cc"
  [ -f "$src" ] || { echo "fuzz.sh: no $src" >&2; exit 2; }
  read -r -a extra <<<"$(sed -n 's|^// fuzz-sources:||p' "$src" | tr '\n' ' ')"
  bin="$FUZZ_DIR/${t}_fuzz"
  cmd=("$CXX" -std=c++20 -O1 -g -fno-omit-frame-pointer
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I. "$src" "${extra[@]}" -o "$bin")
  echo "== building $bin"
  lock=()
  [ -n "${EDL_BUILD_LOCK:-}" ] && lock=(flock "$EDL_BUILD_LOCK")
  if ! "${lock[@]}" "${cmd[@]}"; then
    echo "fuzz.sh: $t does not build" >&2
    status=1
    continue
  fi
  corpus="$FUZZ_DIR/corpus/$t"
  crashes="$FUZZ_DIR/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  seeds=()
  [ -d "fuzz/corpus/$t" ] && seeds+=("fuzz/corpus/$t")
  echo "== running $t for ${SECONDS_PER_TARGET}s"
  if ! "$bin" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
      -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}"; then
    echo "fuzz.sh: $t FAILED; reproducer in $crashes/" >&2
    status=1
  fi
done
exit $status
