#include "data/image_resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/check.h"

namespace edl::data {
namespace {

// Bilinear taps along one axis: output i reads source lo[i] and hi[i]
// (offsets within the region) with weight frac[i] on hi.
struct LinearTaps {
  std::vector<int64_t> lo, hi;
  std::vector<float> frac;
};

LinearTaps Linear(int64_t in, int64_t out) {
  LinearTaps t;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t i = 0; i < out; ++i) {
    const float x = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const float f = std::floor(x);
    t.lo.push_back(std::max<int64_t>(static_cast<int64_t>(f), 0));
    t.hi.push_back(std::min<int64_t>(static_cast<int64_t>(std::ceil(x)), in - 1));
    t.frac.push_back(x - f);
  }
  return t;
}

std::vector<int64_t> Nearest(int64_t in, int64_t out) {
  std::vector<int64_t> idx;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t i = 0; i < out; ++i) {
    idx.push_back(std::min<int64_t>(
        static_cast<int64_t>(std::floor((static_cast<float>(i) + 0.5f) * scale)), in - 1));
  }
  return idx;
}

// Area taps: output i is the overlap-weighted sum of sources first[i] ..
// first[i] + weights[i].size() - 1 (clamped to the region).
struct AreaTaps {
  std::vector<int64_t> first;
  std::vector<std::vector<float>> weights;
};

AreaTaps Area(int64_t in, int64_t out) {
  AreaTaps t;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t i = 0; i < out; ++i) {
    const float a = static_cast<float>(i) * scale;
    const float b = static_cast<float>(i + 1) * scale;
    const int64_t start = static_cast<int64_t>(std::floor(a));
    const int64_t end = static_cast<int64_t>(std::ceil(b));
    t.first.push_back(start);
    std::vector<float> w;
    for (int64_t k = start; k < end; ++k) {
      w.push_back(std::min(static_cast<float>(k + 1), b) - std::max(static_cast<float>(k), a));
    }
    t.weights.push_back(std::move(w));
  }
  return t;
}

}  // namespace

CropBox AspectCrop(int64_t height, int64_t width, int64_t target_height, int64_t target_width) {
  const auto crop_h = static_cast<int64_t>(static_cast<double>(width * target_height) /
                                           static_cast<double>(target_width));
  const auto crop_w = static_cast<int64_t>(static_cast<double>(height * target_width) /
                                           static_cast<double>(target_height));
  CropBox box;
  box.height = std::max<int64_t>(1, std::min(height, crop_h));
  box.width = std::max<int64_t>(1, std::min(width, crop_w));
  box.top = (height - box.height) / 2;
  box.left = (width - box.width) / 2;
  return box;
}

CropBox SampledRegion(int64_t height, int64_t width, const ImageSpec& spec) {
  if (spec.crop_to_aspect_ratio) return AspectCrop(height, width, spec.height, spec.width);
  return CropBox{0, 0, height, width};
}

void ResizeImage(const DecodedImage& image, const ImageSpec& spec, float* out) {
  EDL_CHECK_EQ(image.channels, spec.channels);
  const CropBox r = SampledRegion(image.height, image.width, spec);
  const int64_t c = image.channels, oh = spec.height, ow = spec.width;
  const float scale = static_cast<float>(spec.scale), offset = static_cast<float>(spec.offset);
  const int64_t stride = image.width * c;
  const uint8_t* base = image.pixels.data() + r.top * stride + r.left * c;
  auto at = [&](int64_t y, int64_t x, int64_t k) -> float {
    return static_cast<float>(base[y * stride + x * c + k]);
  };
  if (r.height == oh && r.width == ow) {  // every method samples each pixel as it is
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow * c; ++x)
        *out++ = static_cast<float>(base[y * stride + x]) * scale + offset;
    }
    return;
  }
  switch (spec.interpolation) {
    case Interpolation::kNearest: {
      const std::vector<int64_t> ys = Nearest(r.height, oh), xs = Nearest(r.width, ow);
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          for (int64_t k = 0; k < c; ++k) *out++ = at(ys[y], xs[x], k) * scale + offset;
        }
      }
      return;
    }
    case Interpolation::kBilinear: {
      const LinearTaps ys = Linear(r.height, oh), xs = Linear(r.width, ow);
      for (int64_t y = 0; y < oh; ++y) {
        const float fy = ys.frac[y];
        for (int64_t x = 0; x < ow; ++x) {
          const float fx = xs.frac[x];
          for (int64_t k = 0; k < c; ++k) {
            const float tl = at(ys.lo[y], xs.lo[x], k), tr = at(ys.lo[y], xs.hi[x], k);
            const float bl = at(ys.hi[y], xs.lo[x], k), br = at(ys.hi[y], xs.hi[x], k);
            const float top = tl + (tr - tl) * fx;
            const float bottom = bl + (br - bl) * fx;
            *out++ = (top + (bottom - top) * fy) * scale + offset;
          }
        }
      }
      return;
    }
    case Interpolation::kArea: {
      const AreaTaps ys = Area(r.height, oh), xs = Area(r.width, ow);
      const float norm = static_cast<float>(oh) * static_cast<float>(ow) /
                         (static_cast<float>(r.height) * static_cast<float>(r.width));
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          for (int64_t k = 0; k < c; ++k) {
            float sum = 0;
            for (size_t i = 0; i < ys.weights[y].size(); ++i) {
              const int64_t sy =
                  std::min<int64_t>(ys.first[y] + static_cast<int64_t>(i), r.height - 1);
              float row = 0;
              for (size_t j = 0; j < xs.weights[x].size(); ++j) {
                const int64_t sx =
                    std::min<int64_t>(xs.first[x] + static_cast<int64_t>(j), r.width - 1);
                row += xs.weights[x][j] * at(sy, sx, k);
              }
              sum += ys.weights[y][i] * row;
            }
            *out++ = sum * norm * scale + offset;
          }
        }
      }
      return;
    }
  }
}

}  // namespace edl::data
