#!/usr/bin/env bash
# Benchmark: image files to model inputs, and training from image files
# (docs/performance.md, "Images").
#   1. Writes Fashion-MNIST as RGB JPEG files of 256 x 256 (PIL, bicubic,
#      quality 95; scripts/fashion_mnist_images.py), COUNT records of each
#      split (default 5000) in class folders under DIR/jpg256.
#   2. Decode + resize to 128 x 128 + RandomCrop(112) + RandomFlip of every
#      training file: edl (bench/image_decode_bench.cc; with libjpeg-turbo's
#      DCT scaling, as by default, and without) against torchvision's
#      ImageFolder + DataLoader with PIL (scripts/bench/torch_image_loader.py),
#      1 and 2 threads each, in one run; images/s per thread and the ratio.
#   3. One epoch of zoo:image_folder_cnn (64 x 64 RGB; 1 PS, 2 workers, the
#      local cluster) from the folder, streamed (decoded in each worker's
#      reader thread), and from the same pixels decoded once into memory
#      (--data_in_memory): training records/s, the ratio, and the workers'
#      seconds waiting for input.
# Usage: scripts/bench/image_bench.sh [DIR=/tmp/edl-image-bench] [COUNT=5000]
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-/tmp/edl-image-bench}
COUNT=${2:-5000}
BUILD_DIR=${BUILD_DIR:-build}
/usr/bin/python3 -c "import torchvision" 2>/dev/null ||
  { echo "image_bench.sh needs python3-torchvision (scripts/install-deps.sh --bench)" >&2; exit 1; }
scripts/build.sh edl edl_image_decode_bench >/dev/null
EDL=$PWD/$BUILD_DIR/edl
DECODE=$PWD/$BUILD_DIR/bench/edl_image_decode_bench
mkdir -p "$DIR"
if [[ ! -f "$DIR/jpg256/DONE" ]]; then
  echo "== writing $COUNT + $COUNT JPEG files of 256 x 256 under $DIR/jpg256"
  /usr/bin/python3 scripts/fashion_mnist_images.py "$DIR/jpg256" --format jpg --size 256 --rgb \
    --count "$COUNT" >/dev/null
fi
echo "== $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"

echo "== decode + resize 128 + crop 112 + flip, $(find "$DIR/jpg256/train" -name '*.jpg' | wc -l) files"
for threads in 1 2; do
  # Warm the page cache for both readers alike.
  cat "$DIR"/jpg256/train/*/* > /dev/null
  e=$("$DECODE" "$DIR/jpg256/train" "$threads" 128 112)
  f=$("$DECODE" "$DIR/jpg256/train" "$threads" 128 112 nodct)
  t=$(/usr/bin/python3 scripts/bench/torch_image_loader.py "$DIR/jpg256/train" "$threads" 128 112)
  echo "$e"
  echo "$f"
  echo "$t"
  ep=$(sed -E 's/.* ([0-9]+) per thread.*/\1/' <<<"$e")
  fp=$(sed -E 's/.* ([0-9]+) per thread.*/\1/' <<<"$f")
  tp=$(sed -E 's/.* ([0-9]+) per thread.*/\1/' <<<"$t")
  echo "threads $threads: edl / torch = $(awk -v a="$ep" -v b="$tp" 'BEGIN{printf "%.2f", a/b}')," \
    "without DCT scaling $(awk -v a="$fp" -v b="$tp" 'BEGIN{printf "%.2f", a/b}')"
done

echo "== one epoch of zoo:image_folder_cnn from $DIR/jpg256/train, 1 PS, 2 workers"
train() {
  "$EDL" train --model_def=zoo:image_folder_cnn --training_data="$DIR/jpg256/train" \
    --num_epochs=1 --num_workers=2 --num_ps_pods=1 --minibatch_size=64 --progress_bar=false "$@" 2>&1
}
streamed=$(train)
memory=$(train --data_in_memory)
for name in streamed memory; do
  out=${!name}
  echo "$name: $(grep -E '^training:' <<<"$out")"
  grep -E 'waiting for input' <<<"$out" | sed -E 's/.*(worker-[0-9]+: .*)/  \1/'
done
rs=$(grep -E '^training:' <<<"$streamed" | sed -E 's/.* ([0-9]+) records\/s.*/\1/')
rm_=$(grep -E '^training:' <<<"$memory" | sed -E 's/.* ([0-9]+) records\/s.*/\1/')
echo "streamed / in memory = $(awk -v a="$rs" -v b="$rm_" 'BEGIN{printf "%.2f", a/b}')"
