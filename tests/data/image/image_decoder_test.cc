// JPEG and PNG decoding against PIL, which wrote the files and decoded them
// too (tests/data/image/write_images.py).
#include "data/image_decoder.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/data/image/image_test_files.h"

namespace edl::data {
namespace {

using testing_images::CaseBytes;
using testing_images::PilPixels;

DecodedImage MustDecode(const std::string& name, int64_t channels) {
  DecodeOptions o;
  o.channels = channels;
  auto image = DecodeImage(CaseBytes(name), o);
  EXPECT_TRUE(image.ok()) << name << ": " << image.status().ToString();
  return image.ok() ? std::move(image).value() : DecodedImage();
}

void ExpectSameAsPil(const std::string& name, const std::string& mode) {
  const int64_t channels = mode == "L" ? 1 : 3;
  const DecodedImage image = MustDecode(name, channels);
  const auto want = PilPixels(name, mode);
  ASSERT_EQ(image.width, want.width) << name;
  ASSERT_EQ(image.height, want.height) << name;
  ASSERT_EQ(image.channels, channels);
  ASSERT_EQ(std::string(image.pixels.begin(), image.pixels.end()), want.pixels)
      << name << " as " << mode << " differs from PIL's pixels";
}

TEST(DecodeImage, PngsOfEveryColorTypeDecodeToPilsPixelsInGrayAndRgb) {
  for (const char* name : {"gray.png", "rgb.png", "rgba.png", "la.png", "palette.png",
                           "palette_trns.png", "bit1.png"}) {
    ExpectSameAsPil(name, "L");
    ExpectSameAsPil(name, "RGB");
  }
}

TEST(DecodeImage, JpegsDecodeToPilsPixels) {
  for (const char* name : {"rgb.jpg", "rgb444.jpg", "gray.jpg", "big.jpg"}) {
    ExpectSameAsPil(name, "RGB");
    // Gray from a color JPEG is libjpeg's luma, as PIL's draft("L").
    ExpectSameAsPil(name, "L");
  }
}

TEST(DecodeImage, AJpegMuchLargerThanTheTargetIsDecodedAtAQuarterByDctScaling) {
  DecodeOptions o;
  o.channels = 3;
  o.cover_height = 30;
  o.cover_width = 50;  // big.jpg is 200 x 120: 1/4 still covers 50 x 30, 1/8 does not
  auto image = DecodeImage(CaseBytes("big.jpg"), o);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  const auto want = PilPixels("big.jpg@4", "RGB");  // PIL's draft at libjpeg's 1/4 scale
  ASSERT_EQ(image->width, 50);
  ASSERT_EQ(image->height, 30);
  EXPECT_EQ(std::string(image->pixels.begin(), image->pixels.end()), want.pixels);

  o.cover_width = 101;  // not even 1/2 (100 wide) covers it: full size
  image = DecodeImage(CaseBytes("big.jpg"), o);
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 200);
}

TEST(DecodeImage, TheAspectCropDecidesWhetherAScaleCoversTheTarget) {
  DecodeOptions o;
  o.channels = 3;
  o.cover_height = 40;
  o.cover_width = 40;  // a square crop of 200 x 120 is 120 x 120: 1/2 gives 60 x 60
  o.crop_to_aspect_ratio = true;
  auto image = DecodeImage(CaseBytes("big.jpg"), o);
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 100);
  EXPECT_EQ(image->height, 60);
}

std::string DecodeError(const std::string& name) {
  auto image = DecodeImage(CaseBytes(name), DecodeOptions());
  EXPECT_FALSE(image.ok()) << name << " decoded";
  return image.ok() ? "" : image.status().message();
}

TEST(DecodeImage, BadFilesAreRefusedSayingWhatIsWrong) {
  EXPECT_NE(DecodeError("truncated.jpg").find("corrupt or truncated JPEG"), std::string::npos)
      << DecodeError("truncated.jpg");
  EXPECT_EQ(DecodeError("crc.png"), "is a corrupt or truncated PNG (IDAT: CRC error)");
  EXPECT_NE(DecodeError("corrupt_data.png").find("is a corrupt or truncated PNG (IDAT: "),
            std::string::npos)
      << DecodeError("corrupt_data.png");
  EXPECT_EQ(DecodeError("notimage.png"),
            "is not a JPEG or PNG image (it starts with \"label,pi\")");
  EXPECT_EQ(DecodeError("empty.jpg"), "is empty, not a JPEG or PNG image");
  EXPECT_NE(DecodeError("cmyk.jpg").find("is a CMYK JPEG"), std::string::npos);
  EXPECT_NE(DecodeError("sixteen.png").find("is a 16-bit PNG"), std::string::npos);
}

TEST(DecodeImage, DecompressionBombsAreRefusedFromTheirHeaders) {
  // 30000 x 30000 gray would be 900 MB; the files are tiny, and the limit
  // is checked before any pixel buffer exists.
  EXPECT_NE(DecodeError("bomb.png")
                .find("is a PNG of 30000 x 30000 pixels, more than the limit of "
                      "89478485"),
            std::string::npos)
      << DecodeError("bomb.png");
  EXPECT_NE(DecodeError("bomb.jpg").find("is a JPEG of 30000 x 30000 pixels"), std::string::npos)
      << DecodeError("bomb.jpg");
  DecodeOptions small;
  small.max_pixels = 100;  // gray.png is 13 x 7 = 91 pixels, rgb.jpg 37 x 23
  EXPECT_TRUE(DecodeImage(CaseBytes("gray.png"), small).ok());
  EXPECT_FALSE(DecodeImage(CaseBytes("rgb.jpg"), small).ok());
}

TEST(ImageKind, TellsJpegAndPngBySignature) {
  EXPECT_EQ(ImageKind(CaseBytes("rgb.jpg")), "JPEG");
  EXPECT_EQ(ImageKind(CaseBytes("rgb.png")), "PNG");
  EXPECT_EQ(ImageKind("GIF89a"), "");
}

}  // namespace
}  // namespace edl::data
