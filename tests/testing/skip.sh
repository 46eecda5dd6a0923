# shellcheck shell=bash
# Sourced by the shell tests. skip_or_fail MESSAGE: how a shell test skips
# because a tool, package or data set is missing. Outside CI it prints
# "SKIP: MESSAGE" and exits 77 (skipped: SKIP_RETURN_CODE in
# tests/CMakeLists.txt); under CI=true it fails with exit status 1 instead.
# scripts/test.sh (what CI runs through .ci/run, and what the README tells
# users to run) installs everything the tests need and runs CTest with
# CI=true whether or not CI set it, so a skip there would hide a broken
# setup. MESSAGE names what is missing and what provides it. Only tests that
# need a GPU may skip in CI. The gtest counterpart is tests/testing/skip.h.
skip_or_fail() {
  if [[ "${CI:-}" == "true" ]]; then
    echo "FAIL: CI=true, so this test may not be skipped: $* (scripts/test.sh sets up all that the tests need)" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
