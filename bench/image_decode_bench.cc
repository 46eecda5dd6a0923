// How fast edl turns JPEG/PNG files into augmented model inputs
// (scripts/bench/image_bench.sh): THREADS threads each take every
// THREADS-th batch of 64 records of the folder DIR (one subfolder per
// class), decode and resize them to SIZE x SIZE RGB (data/image_source.h)
// and run RandomCrop(CROP) and RandomFlip("horizontal") on them in training
// mode, as a worker's reader and the model's first layers do. Prints the
// images, the seconds and the images per second (per thread). With
// "nodct", JPEGs are decoded at full size before resizing (the spec's
// dct_scaling false) instead of at 1/2, 1/4 or 1/8 where that covers SIZE.
// Usage: edl_image_decode_bench DIR THREADS SIZE CROP [nodct]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "data/image_source.h"
#include "nn/autograd.h"
#include "nn/layers/augmentation.h"
#include "nn/layers/layer_factory.h"
#include "tensor/ops.h"

int main(int argc, char** argv) {
  using namespace edl;
  if (argc != 5 && !(argc == 6 && std::string(argv[5]) == "nodct")) {
    std::fprintf(stderr, "usage: %s DIR THREADS SIZE CROP [nodct]\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[2]);
  const int64_t size = std::atoll(argv[3]), crop = std::atoll(argv[4]);
  data::ImageSpec spec;
  spec.height = spec.width = size;
  spec.channels = 3;
  spec.dct_scaling = argc == 5;
  data::OpenOptions options;
  options.stream = true;
  auto source = data::ImageSource::Open(argv[1], spec, options);
  if (!source.ok()) {
    std::fprintf(stderr, "%s\n", source.status().ToString().c_str());
    return 1;
  }
  tensor::SetNumThreads(1);
  const int64_t n = (*source)->num_records(), batch = 64;
  std::atomic<int64_t> done{0};
  std::atomic<bool> failed{false};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      nn::NoGradGuard no_grad;
      auto crop_layer =
          nn::layers::CreateLayer("RandomCrop", "crop", {{"height", crop}, {"width", crop}});
      auto flip = nn::layers::CreateLayer("RandomFlip", "flip", {{"mode", "horizontal"}});
      std::mt19937_64 rng(t);
      if (!crop_layer.ok() || !flip.ok() || !(*crop_layer)->Build({{size, size, 3}}, rng).ok() ||
          !(*flip)->Build({{crop, crop, 3}}, rng).ok()) {
        failed = true;
        return;
      }
      for (int64_t b = t * batch; b < n; b += threads * batch) {
        auto e = (*source)->Read(b, std::min(n, b + batch));
        if (!e.ok()) {
          std::fprintf(stderr, "%s\n", e.status().ToString().c_str());
          failed = true;
          return;
        }
        std::vector<uint64_t> keys;
        for (int64_t r : e->records) keys.push_back(nn::layers::AugmentationKey(1, 0, r));
        nn::layers::CallContext ctx{true, &rng, &keys};
        auto x = (*crop_layer)->Call({nn::Var(e->inputs[0])}, ctx);
        auto y = (*flip)->Call(x, ctx);
        done += y[0].value().dim(0);
      }
    });
  }
  for (auto& th : pool) th.join();
  if (failed) return 1;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("edl%s: %lld images in %.2f s: %.0f images/s, %.0f per thread\n",
              spec.dct_scaling ? "" : " (no DCT scaling)", static_cast<long long>(done.load()), s,
              done / s, done / s / threads);
  return 0;
}
