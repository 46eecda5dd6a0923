#!/usr/bin/env bash
# The release archive runs on a machine with nothing installed: makes it
# with scripts/release.sh from BUILD_DIR's edl (archives under a temp dir),
# unpacks it into an empty root that holds only the archive's files, glibc
# (libc, libm and the dynamic loader) and a copy of Fashion-MNIST, and in a
# chroot there runs `edl version` and trains the zoo MLP for one epoch.
# Also checks the archive's layout, SHA256SUMS and that bin/edl and lib/
# need nothing else, and builds the container image from the same files
# (layer within 60 MiB). Prints the archive size, the image size and the
# time from `tar xf` to the first training step.
# Usage: release_test.sh BUILD_DIR
# Exit status: 0 pass, 1 fail, 77 skipped (not root, so no chroot or /proc
# mount; no buildah; a failure under CI=true, see tests/testing/skip.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/testing/skip.sh
source "$ROOT/tests/testing/skip.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
[[ $# -eq 1 ]] || fail "usage: release_test.sh BUILD_DIR"
[[ $(id -u) -eq 0 ]] || skip_or_fail "the chroot needs root"
DATA=${EDL_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
[[ -r $DATA/train-images-idx3-ubyte.gz ]] || skip_or_fail "no Fashion-MNIST in $DATA (dataset-fashion-mnist)"

tmp=$(mktemp -d -t edl-release-test.XXXXXX)
trap 'umount "$tmp/root/proc" 2>/dev/null; rm -rf "$tmp"' EXIT
OUT_DIR=$tmp/out "$ROOT/scripts/release.sh" "$1" >"$tmp/release.log" 2>&1 ||
  fail "scripts/release.sh failed: $(tail -20 "$tmp/release.log")"
sed 's/^/  | /' "$tmp/release.log" | tail -4
archive=$(ls "$tmp"/out/edl-*-linux-x86_64.tar.gz)
(cd "$tmp/out" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match"
ok "SHA256SUMS matches"
entries=$(tar -tzf "$archive")
for want in bin/edl lib/libdnnl.so.2 lib/libgomp.so.1 README LICENSE; do
  grep -q "^edl-[^/]*/$want\$" <<<"$entries" || fail "archive lacks $want: $entries"
done
! grep -q -E '/lib/lib(ssl|crypto|protobuf|yaml-cpp|z)\.' <<<"$entries" ||
  fail "a library that should be linked in is shipped: $entries"
ok "archive layout ($(du -h "$archive" | cut -f1))"

# An empty root: the archive, glibc and the data, nothing else, and /proc
# as every machine and container runtime provides it (the loader finds
# $ORIGIN through /proc/self/exe).
root=$tmp/root
mkdir -p "$root/data" "$root/tmp" "$root/lib64" "$root/lib/x86_64-linux-gnu" "$root/proc"
mount -t proc proc "$root/proc" || skip_or_fail "cannot mount /proc for the chroot"
cp /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
for so in libc.so.6 libm.so.6; do cp -L "/lib/x86_64-linux-gnu/$so" "$root/lib/x86_64-linux-gnu/"; done
cp "$DATA"/train-*.gz "$DATA"/t10k-*.gz "$root/data/"
# From nothing to one training step: unpack, start, load the data, step.
start=$(date +%s.%N)
tar -C "$root" -xzf "$archive"
dir=$(basename "$archive" .tar.gz)
chroot "$root" "/$dir/bin/edl" train --distribution_strategy=Local --model_def=zoo:fashion_mnist_mlp \
  --training_data=/data/train-images-idx3-ubyte.gz --max_step=1 >"$tmp/step.out" 2>&1 ||
  fail "one step in the empty root: $(tail -5 "$tmp/step.out")"
echo "time from tar xf to the first training step done: $(awk -v s="$start" -v e="$(date +%s.%N)" \
  'BEGIN {printf "%.2f", e - s}') s"
version=$(chroot "$root" "/$dir/bin/edl" version 2>&1) || fail "edl version in the empty root: $version"
grep -q '^edl ' <<<"$version" || fail "edl version printed: $version"
ok "edl version in the empty root: $(head -1 <<<"$version")"
chroot "$root" "/$dir/bin/edl" train --distribution_strategy=Local --model_def=zoo:fashion_mnist_mlp \
  --training_data=/data/train-images-idx3-ubyte.gz --validation_data=/data/t10k-images-idx3-ubyte.gz \
  --num_epochs=1 --log_interval=1 --progress_bar=false >"$tmp/train.out" 2>"$tmp/train.err" ||
  fail "training in the empty root: $(tail -5 "$tmp/train.err")"
grep -q '^final: ' "$tmp/train.out" || fail "no final line: $(cat "$tmp/train.out")"
accuracy=$(grep -o 'val_accuracy [0-9.]*' "$tmp/train.out" | awk '{print $2}')
awk -v a="$accuracy" 'BEGIN {exit !(a >= 0.80)}' || fail "val_accuracy $accuracy < 0.80"
ok "one epoch of the zoo MLP in the empty root: val_accuracy $accuracy"

# The container image from the same files (scripts/build-image.sh --release):
# it must start (the script runs `edl version` inside it) and its layer stay
# within 60 MiB uncompressed.
command -v buildah >/dev/null 2>&1 ||
  skip_or_fail "buildah is not available (Debian package buildah); the image cannot be built here"
log=$("$ROOT/scripts/build-image.sh" --release "$root/$dir" --output "$tmp/image.tar" 2>&1) ||
  fail "build-image.sh --release failed: $log"
grep -q '^edl version inside the image: edl ' <<<"$log" || fail "no version from inside the image: $log"
grep -q "^  /usr/local/lib/libdnnl.so.2 <- $root/$dir/lib/libdnnl.so.2 " <<<"$log" ||
  fail "the image does not hold the archive's lib/: $log"
layer=$(sed -n 's/.*layer [0-9.]* MiB (\([0-9]*\) bytes) uncompressed.*/\1/p' <<<"$log")
[[ -n $layer ]] || fail "no layer size in: $log"
((layer <= 60 * 1048576)) || fail "image layer $layer bytes > 60 MiB"
ok "image from the release files: $(grep -o 'layer [0-9.]* MiB' <<<"$log") uncompressed"
