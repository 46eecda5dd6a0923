#!/usr/bin/env bash
# Formats edl's C++ and CUDA sources with clang-format and the repository's
# .clang-format (Google style, 100 columns). The style is pinned to
# clang-format 14, Debian 12's: other versions break lines differently.
#
# Usage: scripts/format.sh            rewrite every source file in place
#        scripts/format.sh --check    change nothing; list the files that
#                                     differ and exit 1 if any does
#        scripts/format.sh FILE...    rewrite only these files
# Env:   CLANG_FORMAT  the binary (default: clang-format-14, else clang-format)
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi

clang_format=${CLANG_FORMAT:-}
if [[ -z "$clang_format" ]]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null 2>&1; then
      clang_format=$candidate
      break
    fi
  done
fi
if [[ -z "$clang_format" ]]; then
  echo "format.sh: clang-format not found (Debian: apt-get install clang-format)" >&2
  exit 2
fi
version=$("$clang_format" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [[ "$version" != "14" ]]; then
  echo "format.sh: $clang_format is version ${version:-unknown}; the style is pinned to" \
       "clang-format 14 (set CLANG_FORMAT)" >&2
  exit 2
fi

files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
  # Every C++/CUDA source under the project's own folders; build trees and
  # out/ are not sources.
  mapfile -t files < <(find base cmd data kube net nn roles tensor tests bench fuzz \
    -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) \
    -not -path 'tests/tfjs/node_modules/*' | LC_ALL=C sort)
fi

if [[ $check -eq 0 ]]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 64 -P "$(nproc)" "$clang_format" -i --style=file
  exit 0
fi

# One clang-format per 64 files, on every core: it warns at each place
# where it would change a file (include order too), exactly the files that a
# rewrite would change.
report=$(mktemp)
trap 'rm -f "$report"' EXIT
if ! printf '%s\0' "${files[@]}" |
    xargs -0 -n 64 -P "$(nproc)" "$clang_format" --style=file --dry-run 2>"$report"; then
  echo "format.sh: $clang_format failed:" >&2
  # What is not a formatting warning (each is followed by the line and a caret).
  awk '/code should be clang-formatted/ {skip = 3} skip > 0 {skip--; next} {print}' "$report" |
    head -20 >&2
  exit 2
fi
mapfile -t unformatted < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' \
  "$report" | LC_ALL=C sort -u)
for f in "${unformatted[@]}"; do
  echo "not formatted: $f (scripts/format.sh $f rewrites it)"
done
differ=${#unformatted[@]}
if [[ $differ -gt 0 ]]; then
  echo "format.sh: $differ of ${#files[@]} files differ from .clang-format" >&2
  exit 1
fi
echo "format.sh: all ${#files[@]} files follow .clang-format"
