// The "image" object of a spec's input: parsed, written back, and refused
// when malformed, naming the field.
#include "data/image_spec.h"

#include "data/input_spec.h"
#include "gtest/gtest.h"

namespace edl::data {
namespace {

std::string Error(const std::string& json) {
  auto spec = InputSpecFromJson(json, "m.json: input");
  EXPECT_FALSE(spec.ok()) << json;
  return spec.ok() ? "" : spec.status().message();
}

TEST(ImageSpec, AnImageObjectMeansImageFilesAndRoundTrips) {
  auto spec = InputSpecFromJson(
      R"({"image": {"size": [64, 48], "channels": 3, "interpolation": "area",
          "crop_to_aspect_ratio": true, "dct_scaling": false, "scale": 0.5, "offset": -1,
          "class_names": ["cat", "dog"], "max_pixels": 1000000}})",
      "m.json: input");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->format, DataFormat::kImages);
  EXPECT_EQ(spec->image.height, 64);
  EXPECT_EQ(spec->image.width, 48);
  EXPECT_EQ(spec->image.interpolation, Interpolation::kArea);
  EXPECT_TRUE(spec->image.crop_to_aspect_ratio);
  EXPECT_FALSE(spec->image.dct_scaling);
  EXPECT_EQ(spec->image.class_names, std::vector<std::string>({"cat", "dog"}));
  auto again = InputSpecFromJson(InputSpecToJson(*spec), "again");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(InputSpecToJson(*again), InputSpecToJson(*spec));
  EXPECT_EQ(again->image.max_pixels, 1000000);
  EXPECT_EQ(again->image.scale, 0.5);
}

TEST(ImageSpec, TfRecordImagesDefaultToTheImageEncodedFeature) {
  auto spec = InputSpecFromJson(
      R"({"format": "tfrecord", "label": "image/class/label", "image": {"size": [8, 8]}})", "x");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->image.feature, "image/encoded");
  EXPECT_EQ(spec->image.channels, 3);
}

TEST(ImageSpec, MalformedImageObjectsAreRefusedNamingTheField) {
  EXPECT_EQ(Error(R"({"image": {"channels": 1}})"),
            "m.json: input.image.size: is required: [height, width] of the model's image input");
  EXPECT_EQ(Error(R"({"image": {"size": [28]}})"),
            "m.json: input.image.size: must be [height, width], two positive integers, got [28]");
  EXPECT_EQ(Error(R"({"image": {"size": [0, 28]}})"),
            "m.json: input.image.size: must be [height, width], two positive integers, got "
            "[0,28]");
  EXPECT_EQ(Error(R"({"image": {"size": [28, 28], "channels": 4}})"),
            "m.json: input.image.channels: must be 1 (grayscale) or 3 (RGB), got 4");
  EXPECT_EQ(Error(R"({"image": {"size": [28, 28], "interpolation": "bicubic"}})"),
            "m.json: input.image.interpolation: must be \"bilinear\", \"nearest\" or \"area\", got "
            "\"bicubic\"");
  EXPECT_EQ(Error(R"({"image": {"size": [28, 28], "class_names": ["a", "a"]}})"),
            "m.json: input.image.class_names: names \"a\" twice");
  EXPECT_EQ(Error(R"({"image": {"size": [28, 28], "colour": 1}})").substr(0, 44),
            "m.json: input.image.colour: unknown field (e");
  EXPECT_EQ(Error(R"({"image": [28, 28]})").substr(0, 28), "m.json: input.image: must be");
  EXPECT_EQ(Error(R"({"format": "images"})"),
            "m.json: input.image: is required with format \"images\": {\"size\": [height, width]}");
  EXPECT_EQ(Error(R"({"format": "images", "image": {"size": [2, 2]}, "delimiter": ";"})"),
            "m.json: input.delimiter: is not a field of image files (format \"images\" takes only "
            "\"image\")");
  EXPECT_EQ(Error(R"({"format": "idx", "image": {"size": [2, 2]}})").substr(0, 28),
            "m.json: input.image: is for ");
  EXPECT_EQ(Error(R"({"format": "images", "image": {"size": [2, 2], "feature": "x"}})"),
            "m.json: input.image.feature: is for TFRecord files (set \"format\": \"tfrecord\")");
  EXPECT_EQ(Error(R"({"image": {"size": [2, 2]}, "label": "y"})").substr(0, 34),
            "m.json: input.image: with IDX or C");
}

}  // namespace
}  // namespace edl::data
