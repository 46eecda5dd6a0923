#!/usr/bin/env bash
# Installs every Debian package edl needs to build, test and benchmark.
# Nothing is downloaded at build time; the tfjs round-trip test installs its
# npm packages from tests/tfjs/package-lock.json (scripts/test.sh runs npm ci).
# Under scripts/test.sh (which runs the tests with CI=true, in CI or not) a
# test that misses a tool fails instead of skipping (tests/testing/skip.sh,
# skip.h), so every tool a test needs is listed here:
# buildah (image_build), python3-yaml (k8s_manifests), nodejs and npm (the
# TF.js round trips), kubectl (fakekube's KubectlTest), gnuplot-nox (the
# utilization experiment), chromium (the job page, loaded headless),
# clang-format (source_format, the style check), postgresql and sqlite3 (the
# database tests start their own server and write their tables with psql and
# sqlite3), python3-pil (the image tests' files and pixels come from PIL, not
# edl). Only the GPU tests may skip.
#
# Usage: scripts/install-deps.sh [--bench]
#   --bench  also install PyTorch and OpenBLAS for scripts/bench/.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libdnnl-dev libboost1.81-dev nlohmann-json3-dev libcli11-dev zlib1g-dev
  libgtest-dev libgmock-dev
  libssl-dev libyaml-cpp-dev libprotobuf-dev protobuf-compiler
  libpq-dev libsqlite3-dev postgresql sqlite3
  libturbojpeg0-dev libpng-dev python3-pil
  dataset-fashion-mnist
  buildah gnuplot-nox
  nodejs
  python3-yaml
  chromium
  clang-format
)
# nodejs from some sources bundles npm; Debian's separate npm package is only
# needed where it does not.
command -v npm >/dev/null 2>&1 || packages+=(npm)
# The fake Kubernetes API server is checked against kubectl; the Google
# Cloud SDK's kubectl 1.32 is used where present, Debian's otherwise.
if [[ ! -x /usr/lib/google-cloud-sdk/bin/kubectl.1.32 ]] && ! command -v kubectl >/dev/null 2>&1; then
  packages+=(kubernetes-client)
fi
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(python3-torch python3-torchvision libopenblas0-openmp python3-numpy libopenmpi-dev openmpi-bin)
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

# Small real CSV data sets (breast_cancer, iris, wine) ship inside Debian's
# python3-sklearn. Installing that package would pull libboost1.74-dev (via
# pythran), which conflicts with libboost1.81-dev, so only its data files are
# unpacked from the .deb.
SKLEARN_DATA=/usr/local/share/edl/sklearn
if [[ ! -f $SKLEARN_DATA/iris.csv ]]; then
  tmp=$(mktemp -d)
  chmod 777 "$tmp"; (cd "$tmp" && apt-get download -qq python3-sklearn 2>/dev/null)
  dpkg-deb -x "$tmp"/python3-sklearn_*.deb "$tmp/x"
  $SUDO mkdir -p "$SKLEARN_DATA"
  $SUDO cp "$tmp"/x/usr/lib/python3/dist-packages/sklearn/datasets/data/*.csv* "$SKLEARN_DATA"/
  rm -rf "$tmp"
  echo "install-deps: sklearn CSV data in $SKLEARN_DATA"
fi
