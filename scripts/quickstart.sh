#!/usr/bin/env bash
# Sets up edl and trains the zoo CNN on Fashion-MNIST (Debian's
# dataset-fashion-mnist), evaluates it on the test set, and exports it to
# ./fashion_mnist_model (TF.js model.json + weights.bin + edl checkpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh edl
D=/usr/share/datasets/fashion-mnist
./build/edl train --model_def=zoo:fashion_mnist_cnn \
  --training_data=$D/train-images-idx3-ubyte.gz \
  --validation_data=$D/t10k-images-idx3-ubyte.gz \
  --num_epochs=3 --checkpoint_dir=fashion_mnist_checkpoints --checkpoint_steps=500 \
  --keep_checkpoint_max=2 --output=fashion_mnist_model "$@"
