#!/usr/bin/env bash
# Builds the edl image from the binary given as $1 with scripts/build-image.sh
# into a temp dir and checks the result: a valid OCI archive (index.json,
# oci-layout, blobs matching their digests), `edl version` ran inside the
# image, the image config (entrypoint, PATH, workdir, labels), and that the
# layer holds exactly the binary, its shared libraries (byte for byte the
# host's), the CA bundle and /tmp, with nothing else.
# Exit status: 0 pass, 1 fail, 77 skipped (buildah not available; a failure
# under CI=true, see tests/testing/skip.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
# shellcheck source=tests/testing/skip.sh
source "$ROOT/tests/testing/skip.sh"
readonly CA_BUNDLE=etc/ssl/certs/ca-certificates.crt

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }

[[ $# -eq 1 ]] || fail "usage: build_image_test.sh PATH_TO_EDL_BINARY"
command -v buildah >/dev/null 2>&1 ||
  skip_or_fail "buildah is not available (Debian package buildah); the image cannot be built here"
binary=$(realpath "$1")
[[ -x $binary ]] || fail "'$1' is not an executable"

tmp=$(mktemp -d -t edl-image-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
archive=$tmp/edl.tar
tag=edl-test:latest

# 1. The script succeeds and writes the archive.
if ! log=$("$ROOT/scripts/build-image.sh" --binary "$binary" --tag "$tag" --output "$archive" 2>&1); then
  fail "scripts/build-image.sh failed:"$'\n'"$log"
fi
while IFS= read -r line; do echo "  | $line"; done <<<"$log"
[[ -s $archive ]] || fail "no archive at $archive"
ok "archive written ($(stat -c %s "$archive") bytes)"

# 2. It is an OCI archive: a tar with oci-layout and index.json, the index
#    names a manifest under our reference, and every blob the manifest names
#    is present with the digest it claims.
entries=$(tar -tf "$archive") || fail "$archive is not a tar file"
grep -qx 'oci-layout' <<<"$entries" || fail "archive has no oci-layout"
grep -qx 'index.json' <<<"$entries" || fail "archive has no index.json"
mkdir "$tmp/oci"
tar -xf "$archive" -C "$tmp/oci"
grep -q '"imageLayoutVersion": *"1.0.0"' "$tmp/oci/oci-layout" || fail "oci-layout: $(cat "$tmp/oci/oci-layout")"
index=$(cat "$tmp/oci/index.json")
grep -qF "\"org.opencontainers.image.ref.name\":\"$tag\"" <<<"$index" || fail "index.json does not name $tag: $index"
digests_in() { grep -o '"digest":"sha256:[0-9a-f]\{64\}"' <<<"$1" | sed 's/.*sha256:\([0-9a-f]*\)"/\1/'; }
blob() {
  local path=$tmp/oci/blobs/sha256/$1
  [[ -f $path ]] || fail "blob sha256:$1 is missing"
  [[ $(sha256sum "$path" | cut -d' ' -f1) == "$1" ]] || fail "blob sha256:$1 does not match its digest"
  echo "$path"
}
manifest_digests=$(digests_in "$index")
[[ $(wc -l <<<"$manifest_digests") -eq 1 ]] || fail "index.json should name one manifest: $index"
manifest=$(cat "$(blob "$manifest_digests")")
grep -qF '"mediaType":"application/vnd.oci.image.manifest.v1+json"' <<<"$manifest" || fail "not an OCI manifest: $manifest"
config_digest=$(digests_in "${manifest%%\"layers\"*}")
layer_digests=$(digests_in "${manifest#*\"layers\"}")
[[ -n $config_digest && -n $layer_digests ]] || fail "manifest without config or layers: $manifest"
config=$(cat "$(blob "$config_digest")")
ok "valid OCI archive: oci-layout, index.json -> manifest -> config + $(wc -l <<<"$layer_digests") layer(s), digests match"

# 3. `edl version` ran inside the image and printed what it prints here.
expected_line=$("$binary" version | head -n 1)
grep -qxF "edl version inside the image: $expected_line" <<<"$log" ||
  fail "no 'edl version inside the image: $expected_line' line in the script's output"
ok "edl version ran inside the image: $expected_line"

# 4. The image config.
version=${expected_line#edl }
version=${version%% *}
for want in '"Entrypoint":["/usr/local/bin/edl"]' '"Env":["PATH=/usr/local/bin"]' '"WorkingDir":"/tmp"' \
  '"org.opencontainers.image.licenses":"MIT"' "\"org.opencontainers.image.version\":\"$version\"" \
  '"org.opencontainers.image.source":' '"os":"linux"'; do
  grep -qF "$want" <<<"$config" || fail "image config lacks $want: $config"
done
ok "config: entrypoint /usr/local/bin/edl, PATH=/usr/local/bin, workdir /tmp, OCI labels"

# 5. The layer holds exactly the expected files, as plain files and dirs.
expected_files=(usr/local/bin/edl "$CA_BUNDLE")
while read -r lib; do expected_files+=("${lib#/}"); done < <(
  ldd "$binary" | sed -n 's/.*=> \(\/[^ ]*\) (.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
declare -A expected=([tmp/]=d)
for f in "${expected_files[@]}"; do
  expected[$f]=-
  d=$(dirname "$f")
  while [[ $d != . ]]; do
    expected[$d/]=d
    d=$(dirname "$d")
  done
done
mkdir "$tmp/rootfs"
declare -A seen=()
while read -r digest; do
  layer=$(blob "$digest")
  listing=$(tar -tvf "$layer") || fail "layer sha256:$digest is not a tar"
  while read -r mode _ _ _ _ name _; do
    name=${name#./}
    [[ -n $name ]] || continue
    [[ -n ${expected[$name]:-} ]] || fail "unexpected entry in the image: $name ($mode)"
    [[ ${mode:0:1} == "${expected[$name]}" ]] ||
      fail "$name should be $([[ ${expected[$name]} == d ]] && echo a directory || echo a regular file), is $mode"
    seen[$name]=$mode
  done <<<"$listing"
  tar -xf "$layer" -C "$tmp/rootfs"
done <<<"$layer_digests"
for name in "${!expected[@]}"; do
  [[ -n ${seen[$name]:-} ]] || fail "missing from the image: $name"
done
[[ ${seen[tmp/]} == drwxrwxrwt ]] || fail "/tmp should be drwxrwxrwt, is ${seen[tmp/]}"
[[ ${seen[usr/local/bin/edl]} == -rwxr-xr-x ]] || fail "/usr/local/bin/edl should be -rwxr-xr-x, is ${seen[usr/local/bin/edl]}"
strip -o "$tmp/stripped" "$binary"
cmp -s "$tmp/stripped" "$tmp/rootfs/usr/local/bin/edl" || fail "/usr/local/bin/edl is not $binary stripped"
for f in "${expected_files[@]:1}"; do
  cmp -s "/$f" "$tmp/rootfs/$f" || fail "/$f in the image differs from this machine's"
done
ok "the image holds exactly ${#expected_files[@]} files (edl, $((${#expected_files[@]} - 2)) libraries, CA bundle) and /tmp"

# 6. The documented route (build/edl, no --release) stays within the 60 MiB
# goal for the uncompressed layer.
layer_bytes=$(sed -n 's/.*layer [0-9.]* MiB (\([0-9]*\) bytes) uncompressed.*/\1/p' <<<"$log")
[[ -n $layer_bytes ]] || fail "no layer size in the script's output: $log"
((layer_bytes <= 60 * 1048576)) || fail "image layer $layer_bytes bytes > 60 MiB"
ok "layer $((layer_bytes / 1048576)) MiB ($layer_bytes bytes) uncompressed, within 60 MiB"

echo "PASS"
