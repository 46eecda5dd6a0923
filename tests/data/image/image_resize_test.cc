// Resizing as Keras' Resizing layer (tf.image.resize, half-pixel centers,
// no antialiasing) does, on images small enough to work out by hand.
#include "data/image_resize.h"

#include <vector>

#include "gtest/gtest.h"

namespace edl::data {
namespace {

DecodedImage Gray(int64_t h, int64_t w, std::vector<uint8_t> pixels) {
  DecodedImage image;
  image.height = h;
  image.width = w;
  image.channels = 1;
  image.pixels = std::move(pixels);
  return image;
}

std::vector<float> Resize(const DecodedImage& image, int64_t h, int64_t w, Interpolation how,
                          bool crop = false) {
  ImageSpec spec;
  spec.height = h;
  spec.width = w;
  spec.channels = image.channels;
  spec.interpolation = how;
  spec.crop_to_aspect_ratio = crop;
  spec.scale = 1.0;
  std::vector<float> out(static_cast<size_t>(h * w * image.channels));
  ResizeImage(image, spec, out.data());
  return out;
}

using V = std::vector<float>;

TEST(ResizeImage, BilinearSamplesAtHalfPixelCentersAndClampsAtTheEdges) {
  // Source x = (i + 0.5) * 2/4 - 0.5: -0.25 (clamped to pixel 0), 0.25,
  // 0.75, 1.25 (clamped to pixel 1).
  EXPECT_EQ(Resize(Gray(1, 2, {0, 100}), 1, 4, Interpolation::kBilinear), V({0, 25, 75, 100}));
  // Source x = 0.5 and 2.5: halfway between neighbours.
  EXPECT_EQ(Resize(Gray(1, 4, {0, 10, 20, 30}), 1, 2, Interpolation::kBilinear), V({5, 25}));
  // Both axes: the 2 x 2 -> 4 x 4 rows are the 1-D result per column, blended.
  const V up = Resize(Gray(2, 2, {0, 100, 200, 40}), 4, 4, Interpolation::kBilinear);
  EXPECT_EQ(V(up.begin(), up.begin() + 4), V({0, 25, 75, 100}));
  EXPECT_EQ(V(up.begin() + 12, up.end()), V({200, 160, 80, 40}));
  // Row 1 samples source row 0.25: 3/4 of row 0 (25 at column 1) and 1/4 of
  // row 1 (200 + (40 - 200) * 0.25 = 160).
  EXPECT_FLOAT_EQ(up[5], 0.75f * 25 + 0.25f * 160);
}

TEST(ResizeImage, NearestTakesThePixelUnderEachOutputCenter) {
  // Source x = floor((i + 0.5) * 1.5): 0, 2.
  EXPECT_EQ(Resize(Gray(1, 3, {7, 8, 9}), 1, 2, Interpolation::kNearest), V({7, 9}));
  // Source x = floor((i + 0.5) * 2/3): 0, 1, 1.
  EXPECT_EQ(Resize(Gray(1, 2, {7, 8}), 1, 3, Interpolation::kNearest), V({7, 8, 8}));
}

TEST(ResizeImage, AreaAveragesTheCoveredPixelsWeightedByOverlap) {
  EXPECT_EQ(Resize(Gray(2, 2, {10, 20, 30, 40}), 1, 1, Interpolation::kArea), V({25}));
  // Output 0 covers [0, 1.5): pixel 0 whole and half of pixel 1.
  EXPECT_EQ(Resize(Gray(1, 3, {0, 30, 60}), 1, 2, Interpolation::kArea), V({10, 50}));
}

TEST(ResizeImage, AnImageOfTheTargetSizeIsOnlyScaled) {
  ImageSpec spec;
  spec.height = 1;
  spec.width = 2;
  spec.channels = 1;
  spec.scale = 0.5;
  spec.offset = -1;
  std::vector<float> out(2);
  ResizeImage(Gray(1, 2, {4, 10}), spec, out.data());
  EXPECT_EQ(out, V({1, 4}));
}

TEST(ResizeImage, ChannelsStayInterleaved) {
  DecodedImage rgb;
  rgb.height = 1;
  rgb.width = 2;
  rgb.channels = 3;
  rgb.pixels = {0, 10, 20, 100, 110, 120};
  EXPECT_EQ(Resize(rgb, 1, 1, Interpolation::kBilinear), V({50, 60, 70}));
}

TEST(AspectCrop, IsKerasSmartResizeWindow) {
  // crop height = int(200 * 40 / 40) = 200 -> 120; width = int(120 * 40 / 40)
  // = 120; centred: left = (200 - 120) / 2.
  const CropBox a = AspectCrop(120, 200, 40, 40);
  EXPECT_EQ(a.top, 0);
  EXPECT_EQ(a.left, 40);
  EXPECT_EQ(a.height, 120);
  EXPECT_EQ(a.width, 120);
  // int(8 * 2 / 3) = 5; int(5 * 3 / 2) = 7; left = int(1 / 2) = 0.
  const CropBox b = AspectCrop(5, 8, 2, 3);
  EXPECT_EQ(b.height, 5);
  EXPECT_EQ(b.width, 7);
  EXPECT_EQ(b.left, 0);
}

TEST(ResizeImage, CropToAspectRatioResizesTheCentredWindowInsteadOfStretching) {
  // 2 x 4 to 2 x 2: the window is columns 1 and 2.
  const auto image = Gray(2, 4, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(Resize(image, 2, 2, Interpolation::kBilinear, /*crop=*/true), V({2, 3, 6, 7}));
  // Stretched instead: source columns floor((i + 0.5) * 2) = 1 and 3.
  EXPECT_EQ(Resize(image, 2, 2, Interpolation::kNearest, /*crop=*/false), V({2, 4, 6, 8}));
}

}  // namespace
}  // namespace edl::data
