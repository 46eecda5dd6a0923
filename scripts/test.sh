#!/usr/bin/env bash
# Sets up everything and runs the whole test suite: Debian packages, the
# @tensorflow/tfjs package for the TF.js round-trip tests, a Release build,
# then every test through CTest. This is what .ci/run calls, and what the
# README tells users to run: both behave the same.
#
# A missing tool fails the run, with or without CI=true: after
# scripts/install-deps.sh every tool the tests use must be there, so this
# script first names any that is not (and the Debian package that provides
# it), then runs CTest with CI=true, under which a test that would skip for a
# missing tool fails instead (tests/testing/skip.h, skip.sh). Only the tests
# that need a GPU may skip.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
(cd tests/tfjs && npm ci --no-audit --no-fund --loglevel=error)

# tool, then the Debian package that provides it.
tools=(
  cmake cmake  ninja ninja-build  ctest cmake  clang-format clang-format
  buildah buildah  gnuplot gnuplot-nox  node nodejs  npm npm  chromium chromium
)
missing=()
for ((i = 0; i < ${#tools[@]}; i += 2)); do
  command -v "${tools[i]}" >/dev/null 2>&1 || missing+=("${tools[i]} (Debian package ${tools[i + 1]})")
done
if [[ ! -x /usr/lib/google-cloud-sdk/bin/kubectl.1.32 ]] && ! command -v kubectl >/dev/null 2>&1; then
  missing+=("kubectl (Debian package kubernetes-client)")
fi
# As tests/image/k8s_manifests_test.sh looks: the python3 on PATH, else Debian's.
python3 -c 'import yaml' 2>/dev/null || /usr/bin/python3 -c 'import yaml' 2>/dev/null ||
  missing+=("python3 with PyYAML (Debian package python3-yaml)")
[[ -d tests/tfjs/node_modules/@tensorflow/tfjs ]] ||
  missing+=("tests/tfjs/node_modules (npm ci in tests/tfjs)")
if ((${#missing[@]})); then
  echo "test.sh: the tests need these, still missing after scripts/install-deps.sh:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  echo "test.sh: install them (scripts/install-deps.sh installs them all with apt-get, as root or with sudo), then run scripts/test.sh again" >&2
  exit 1
fi

scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
tests_start=$SECONDS
status=0
CI=true ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" --timeout 900 || status=$?
echo "test.sh: tests ran for $((SECONDS - tests_start)) s; all of test.sh took $SECONDS s"
exit "$status"
