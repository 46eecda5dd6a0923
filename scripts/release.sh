#!/usr/bin/env bash
# Builds the release archives (docs/release.md):
#   out/release/edl-VERSION-linux-x86_64.tar.gz        bin/edl, lib/, README, LICENSE
#   out/release/edl-VERSION-linux-x86_64-cuda.tar.gz   bin/libedl_cuda.so (where nvcc exists)
#   out/release/SHA256SUMS
# bin/edl links statically libstdc++, libgcc, OpenSSL, protobuf, yaml-cpp and
# zlib; glibc stays dynamic. oneDNN exists only as a shared library, and with
# it go its OpenCL loader, the libstdc++/libgcc_s it needs and libgomp: Debian
# ships libgomp.a as well, but libdnnl.so.2 links libgomp.so.1, and a static
# copy in bin/edl would make two OpenMP runtimes in one process. These are
# copied into lib/, which bin/edl finds through its $ORIGIN/../lib RPATH. The script
# fails if anything either needs would come from elsewhere than the archive
# or glibc.
#
# Usage: [OUT_DIR=out/release] scripts/release.sh [BUILD_DIR=build]
# BUILD_DIR is the ordinary Release build (scripts/build.sh), whose edl is
# linked this way by default (EDL_RELEASE_LINK).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDL_RELEASE_LINK=ON >/dev/null
targets=(edl)
if ninja -C "$B" -t targets all 2>/dev/null | grep -q '^edl_cuda:'; then targets+=(edl_cuda); fi
ninja -C "$B" -j"$(nproc)" "${targets[@]}"

version=$("$B/edl" version | awk 'NR == 1 {print $2}')
name=edl-$version-linux-x86_64
out=${OUT_DIR:-out/release}
rm -rf "$out" && mkdir -p "$out/$name/bin" "$out/$name/lib"
cp "$B/edl" "$out/$name/bin/edl"
strip "$out/$name/bin/edl"

# glibc's libraries and loader: every x86-64 Linux has them.
is_glibc() { [[ $(basename "$1") =~ ^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64)\.so ]]; }
# Copies the shared libraries `file` needs (other than glibc's) into lib/,
# then theirs.
bundle() {
  local lib
  while read -r lib; do
    is_glibc "$lib" && continue
    [[ -e $out/$name/lib/$(basename "$lib") ]] && continue
    cp -L "$lib" "$out/$name/lib/"
    bundle "$lib"
  done < <(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
}
bundle "$out/$name/bin/edl"

# Every library bin/edl loads resolves inside the archive or to glibc, and
# every library a lib/ file needs is in lib/ or glibc's.
bad=$(LD_LIBRARY_PATH= ldd "$out/$name/bin/edl" | awk '$2 == "=>" {print $1, $3}' |
  while read -r so path; do
    if [[ $path == "not" ]]; then echo "$so (not found)"; continue; fi
    is_glibc "$path" && continue
    [[ $(readlink -f "$path") == $(readlink -f "$out/$name")/* ]] || echo "$so -> $path"
  done)
for f in "$out/$name"/lib/*.so*; do
  for so in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    is_glibc "$so" || [[ -e $out/$name/lib/$so ]] || bad+=" $(basename "$f") needs $so"
  done
done
[[ -z $bad ]] || { echo "release.sh: libraries outside the archive: $bad" >&2; exit 1; }

cp LICENSE "$out/$name/"
cat >"$out/$name/README" <<EOF
edl $version for x86-64 Linux (glibc 2.36 or newer)

  bin/edl --help
  bin/edl train --distribution_strategy=Local --model_def=zoo:fashion_mnist_mlp \\
      --training_data=DIR/train-images-idx3-ubyte.gz

bin/edl needs only glibc from the machine: the other libraries are linked in
or sit in lib/ (found through bin/edl's \$ORIGIN/../lib RPATH; keep bin/ and
lib/ side by side). For GPUs unpack $name-cuda.tar.gz over this directory
(it adds bin/libedl_cuda.so) and install cuDNN 9 and cuBLAS 13 and the NVIDIA
driver. The source repository's docs/ explain edl; docs/release.md this
archive.
EOF
tar -C "$out" -czf "$out/$name.tar.gz" "$name"
archives=("$name.tar.gz")
if [[ -f $B/libedl_cuda.so ]]; then
  mkdir -p "$out/cuda/$name/bin"
  cp "$B/libedl_cuda.so" "$out/cuda/$name/bin/"
  tar -C "$out/cuda" -czf "$out/$name-cuda.tar.gz" "$name"
  archives+=("$name-cuda.tar.gz")
fi
(cd "$out" && sha256sum "${archives[@]}" >SHA256SUMS)
for a in "${archives[@]}"; do
  echo "$out/$a: $(du -h "$out/$a" | cut -f1) ($(tar -tzf "$out/$a" | wc -l) entries)"
done
echo "unpacked: $(du -sh "$out/$name" | cut -f1); lib/: $(ls "$out/$name/lib" | paste -sd' ')"
