#!/usr/bin/env bash
# Every C++/CUDA source follows the committed .clang-format
# (scripts/format.sh --check), and the check itself catches a badly
# formatted file, so a pass means something.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/testing/skip.sh"

if ! command -v clang-format-14 >/dev/null 2>&1 &&
   ! clang-format --version 2>/dev/null | grep -q 'version 14\.'; then
  skip_or_fail "clang-format 14 is not installed (Debian 12: apt-get install clang-format)"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "$root/.clang-format" "$scratch/"
printf 'int  Add( int a,int b ){return a+b;}\n' > "$scratch/bad.cc"
if "$root/scripts/format.sh" --check "$scratch/bad.cc" > "$scratch/out" 2>&1; then
  echo "FAIL: the check passed a badly formatted file:" >&2
  cat "$scratch/out" >&2
  exit 1
fi
grep -q "not formatted: $scratch/bad.cc" "$scratch/out" || {
  echo "FAIL: the check did not name the badly formatted file:" >&2
  cat "$scratch/out" >&2
  exit 1
}

"$root/scripts/format.sh" --check
