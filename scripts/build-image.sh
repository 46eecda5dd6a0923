#!/usr/bin/env bash
# Builds the edl container image with buildah: FROM scratch, holding the edl
# binary (stripped), exactly the shared libraries it loads (resolved with ldd, the
# dynamic loader included, each at the path the loader looks for it), the CA
# bundle for TLS to the Kubernetes API server and a writable /tmp. It then runs
# `edl version` inside the built image to prove it starts, and writes the image
# as an OCI archive. Daemonless: private vfs storage under a temp dir that is
# removed on exit, so nothing is left behind on the machine.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
readonly ROOT
readonly PROG=build-image.sh
readonly CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
# Driver libraries that the NVIDIA container runtime mounts from the node; an
# image must never carry its own copy (it would not match the node's driver).
readonly HOST_PROVIDED='^(libcuda\.so|libnvidia-|libnvcuvid\.so)'

usage() {
  cat <<EOF
Usage: scripts/$PROG [--binary PATH | --release DIR] [--tag NAME] [--output FILE.tar] [--source URL]
                      [--extra LIB]... [--cuda-plugin PATH]

Builds a FROM-scratch OCI image holding the edl binary and the shared libraries
it needs, runs \`edl version\` inside it, and writes it as an oci-archive.

  --binary PATH     the edl binary (default: build/edl under the repo root)
  --release DIR     an unpacked release archive (scripts/release.sh): its
                    bin/edl and lib/ go to /usr/local/bin and /usr/local/lib
                    (bin/edl finds lib/ through \$ORIGIN/../lib), with glibc
                    from this machine: the image holds the released files
  --tag NAME        image name (default: edl:VERSION, VERSION from \`edl version\`)
  --output FILE     the OCI archive to write (default: build/edl-image.tar)
  --source URL      org.opencontainers.image.source label (default: unknown)
  --extra LIB       also copy this library and what it links (for something
                    the binary dlopens); may be repeated
  --cuda-plugin PATH  also ship the CUDA backend (build/libedl_cuda.so, see
                    docs/gpu.md) beside the binary, with cuBLAS and cuDNN (all
                    of cuDNN's sub-libraries, which it dlopens) but never the
                    driver: one image then serves GPU and CPU pods (~1 GB
                    bigger); edl uses the GPU only where --device asks and a
                    driver is mounted
  -h, --help        this text

Needs buildah (Debian: apt-get install buildah). Load the result with
  skopeo copy oci-archive:FILE docker://REGISTRY/edl:TAG   or   podman load -i FILE
EOF
}

die() {
  echo "$PROG: $*" >&2
  exit 1
}

binary=$ROOT/build/edl
tag=""
output=$ROOT/build/edl-image.tar
source_url=unknown
extras=()
cuda_plugin=""
release=""
while (($#)); do
  case $1 in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --release) release=$(realpath "${2:?--release needs a directory}"); binary=$release/bin/edl; shift 2 ;;
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --output) output=${2:?--output needs a file}; shift 2 ;;
    --source) source_url=${2:?--source needs a URL}; shift 2 ;;
    --extra) extras+=("${2:?--extra needs a library path}"); shift 2 ;;
    --cuda-plugin) cuda_plugin=${2:?--cuda-plugin needs a path}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; echo >&2; die "unknown argument '$1'" ;;
  esac
done

command -v buildah >/dev/null 2>&1 ||
  die "buildah not found in PATH; install it (Debian: apt-get install buildah, or scripts/install-deps.sh)"
command -v ldd >/dev/null 2>&1 || die "ldd not found in PATH (Debian package libc-bin)"
command -v strip >/dev/null 2>&1 || die "strip not found in PATH (Debian package binutils)"
[[ -e $binary ]] || die "binary '$binary' does not exist; build it (scripts/build.sh) or pass --binary PATH"
[[ -f $binary && -x $binary ]] || die "binary '$binary' is not an executable file"
[[ -f $CA_BUNDLE ]] || die "CA bundle $CA_BUNDLE not found (Debian package ca-certificates)"
for e in "${extras[@]}"; do [[ -f $e ]] || die "--extra '$e' does not exist"; done
[[ -z $cuda_plugin || -f $cuda_plugin ]] ||
  die "--cuda-plugin '$cuda_plugin' does not exist; build the edl_cuda target (needs nvcc)"
output=$(realpath -m "$output")
[[ $output != *:* ]] || die "--output '$output' must not contain ':' (it is part of an oci-archive reference)"
[[ -d $(dirname "$output") ]] || die "--output directory '$(dirname "$output")' does not exist"

start=$SECONDS

# The version line, e.g. "edl 0.1.0 (af82c2c)", names the image and labels it;
# the same line must come back from inside the image.
version_line=$("$binary" version | head -n 1) || die "'$binary version' failed on this machine"
[[ $version_line =~ ^edl\ ([^ ]+)\ \(([^\)]*)\)$ ]] ||
  die "'$binary version' printed '$version_line', expected 'edl VERSION (REVISION)'"
version=${BASH_REMATCH[1]}
revision=${BASH_REMATCH[2]}
tag=${tag:-edl:$version}

# Libraries ldd resolves, at the path it reports (the loader's search path,
# e.g. /lib/x86_64-linux-gnu/libc.so.6), plus the loader itself (the
# PT_INTERP path, /lib64/ld-linux-x86-64.so.2). A static binary has none.
libraries_of() {
  local out line
  if ! out=$(LC_ALL=C ldd "$1" 2>&1); then
    [[ $out == *"not a dynamic executable"* || $out == *"statically linked"* ]] && return 0
    die "ldd '$1' failed: $out"
  fi
  while IFS= read -r line; do
    line=${line#"${line%%[![:space:]]*}"}
    case $line in
      *"=> not found"*) die "'$1' needs ${line%% *}, which ldd cannot find on this machine" ;;
      *"=> /"*) line=${line#*=> }; echo "${line%% (*}" ;;
      /*) echo "${line%% (*}" ;;
      statically\ linked) ;;
      *) ;;  # linux-vdso.so.1 lives in the kernel; "name => (addr)" likewise
    esac
  done <<<"$out"
}

library_list=$(
  libraries_of "$binary"
  for e in "${extras[@]}"; do
    realpath -s "$e"
    libraries_of "$e"
  done
  if [[ -n $cuda_plugin ]]; then
    libraries_of "$cuda_plugin"
    # cuDNN loads its engines itself (dlopen), so ldd does not list them;
    # libcudnn_adv (RNNs, attention) is not used by edl.
    for l in $(libraries_of "$cuda_plugin"); do
      [[ $(basename "$l") == libcudnn.so.* ]] || continue
      for sub in "$(dirname "$l")"/libcudnn_*.so.9; do
        [[ -e $sub && $(basename "$sub") != libcudnn_adv* ]] && echo "$sub"
      done
    done
  fi
) || exit 1
mapfile -t libraries < <(awk 'NF && !seen[$0]++' <<<"$library_list")
if [[ -n $release ]]; then
  # The release's own lib/ is staged as a whole below; only glibc and the
  # loader come from this machine.
  mapfile -t libraries < <(printf '%s\n' "${libraries[@]}" | while read -r l; do
    [[ $(realpath "$l") == "$release"/* ]] || echo "$l"
  done)
fi

tmp=$(mktemp -d -t edl-image.XXXXXX)
blob_cache=/var/lib/containers/cache/blob-info-cache-v1.boltdb
blob_cache_existed=false
[[ -e $blob_cache ]] && blob_cache_existed=true
# buildah, run as root, always records pushed blobs in the system blob-info
# cache; remove it again if it was not there before.
b() { buildah --root "$tmp/root" --runroot "$tmp/runroot" --storage-driver vfs "$@"; }
cleanup() {
  b rm --all >/dev/null 2>&1 || true
  b rmi --all --force >/dev/null 2>&1 || true
  if [[ $(id -u) -eq 0 ]]; then
    rm -rf "$tmp"
    if [[ $blob_cache_existed == false && -e $blob_cache ]]; then
      rm -f "$blob_cache"
      rmdir /var/lib/containers/cache /var/lib/containers 2>/dev/null || true
    fi
  else
    buildah unshare rm -rf "$tmp" 2>/dev/null || rm -rf "$tmp"
  fi
}
trap cleanup EXIT

# Private configuration: the CNI backend with its lock under the temp dir
# (netavark would create /etc/containers/networks and /run/containers), our
# own signature policy, and temp files under the temp dir instead of /var/tmp.
mkdir -p "$tmp/net" "$tmp/var-tmp" "$tmp/rootfs"
cat >"$tmp/containers.conf" <<EOF
[network]
network_backend = "cni"
network_config_dir = "$tmp/net"
[engine]
image_copy_tmp_dir = "$tmp/var-tmp"
EOF
echo '{"default":[{"type":"insecureAcceptAnything"}]}' >"$tmp/policy.json"
export CONTAINERS_CONF=$tmp/containers.conf TMPDIR=$tmp/var-tmp

# Stage the root file system: every file as a plain copy of the real file
# (symlinks resolved), so the layer holds no links.
copied=()
stage() {  # stage SOURCE DESTINATION MODE
  install -D -m "$3" "$(realpath "$1")" "$tmp/rootfs$2"
  copied+=("$2 <- $1 ($(stat -L -c %s "$1") bytes)")
}
# The binary without its symbol table and debug sections (strip, as
# scripts/release.sh does; a development build carries ~4 MB of them), so the
# image built from build/edl is as small as the release's. Its dynamic symbols
# stay: the CUDA plugin resolves edl's through them.
install -d "$tmp/rootfs/usr/local/bin"
strip -o "$tmp/rootfs/usr/local/bin/edl" "$(realpath "$binary")"
chmod 0755 "$tmp/rootfs/usr/local/bin/edl"
copied+=("/usr/local/bin/edl <- $binary, stripped ($(stat -c %s "$tmp/rootfs/usr/local/bin/edl") bytes)")
if [[ -n $release ]]; then
  for f in "$release"/lib/*; do stage "$f" "/usr/local/lib/$(basename "$f")" 0755; done
fi
# The plugin beside the binary, where edl looks for it.
[[ -z $cuda_plugin ]] || stage "$cuda_plugin" /usr/local/bin/libedl_cuda.so 0755
for lib in "${libraries[@]}"; do
  if [[ $(basename "$lib") =~ $HOST_PROVIDED ]]; then
    echo "$PROG: leaving out $lib (the NVIDIA container runtime provides it)"
    continue
  fi
  stage "$lib" "$lib" 0755
done
stage "$CA_BUNDLE" "$CA_BUNDLE" 0644
install -d -m 1777 "$tmp/rootfs/tmp"
copied+=("/tmp (empty, mode 1777)")

container=$(b from --name edl-image-build scratch)
b copy --quiet --chown 0:0 "$container" "$tmp/rootfs/" / >/dev/null
b config \
  --entrypoint '["/usr/local/bin/edl"]' \
  --env PATH=/usr/local/bin --workingdir /tmp \
  --created-by "scripts/$PROG: edl, its shared libraries, the CA bundle, /tmp" \
  --label org.opencontainers.image.title=edl \
  --label "org.opencontainers.image.description=edl: elastic deep-learning trainer (client, master, worker, parameter server)" \
  --label "org.opencontainers.image.source=$source_url" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$revision" \
  --label org.opencontainers.image.licenses=MIT \
  "$container"
b commit --quiet --rm --format oci "$container" "$tag" >/dev/null

# Prove the image starts: a fresh container from the committed image (so that
# what buildah run adds, /etc/hosts and mount points, stays out of the image).
check=$(b from --signature-policy "$tmp/policy.json" --name edl-image-check "$tag")
inside=$(b run --isolation chroot --network host "$check" -- edl version) ||
  die "'edl version' failed inside the image: $inside"
inside_line=$(head -n 1 <<<"$inside")
[[ $inside_line == "$version_line" ]] ||
  die "'edl version' inside the image printed '$inside_line', expected '$version_line'"
echo "edl version inside the image: $inside_line"
sed -n "2,\$s/^/  /p" <<<"$inside"
b rm "$check" >/dev/null

rm -f "$output"
b push --quiet --signature-policy "$tmp/policy.json" "$tag" "oci-archive:$output:$tag"

# Sizes: the layer as an uncompressed tar (what a node unpacks) and the archive.
layer_bytes=0
mkdir "$tmp/archive"
tar -xf "$output" -C "$tmp/archive"
for blob in "$tmp"/archive/blobs/sha256/*; do
  magic=$(head -c 2 "$blob" | od -An -tx1 | tr -d ' \n')
  if [[ $magic == 1f8b ]]; then
    layer_bytes=$((layer_bytes + $(gzip -dc "$blob" | wc -c)))
  elif [[ $magic != 7b* ]]; then  # not JSON: an uncompressed layer
    layer_bytes=$((layer_bytes + $(stat -c %s "$blob")))
  fi
done
archive_bytes=$(stat -c %s "$output")

echo "files copied into the image:"
printf '  %s\n' "${copied[@]}"
mib() { numfmt --to-unit=1048576 --format=%.1f "$1"; }
echo "image $tag: layer $(mib "$layer_bytes") MiB ($layer_bytes bytes) uncompressed," \
  "archive $(mib "$archive_bytes") MiB ($archive_bytes bytes)"
echo "wrote $output (oci-archive, reference $tag) in $((SECONDS - start)) s"
