// ResizeImage: decoded 8-bit pixels to a model's float input, as Keras'
// Resizing layer computes it (tf.image.resize without antialiasing, with
// half-pixel centers: torch's interpolate(mode="bilinear",
// align_corners=False) and "nearest-exact" compute the same), optionally
// after Keras' centred crop to the target's aspect ratio, then scaled:
// pixel * scale + offset. Pure functions.
#pragma once

#include <cstdint>

#include "data/image_decoder.h"
#include "data/input_spec.h"

namespace edl::data {

struct CropBox {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

// Keras' crop_to_aspect_ratio window (keras.utils.smart_resize): the
// largest window of height/width = target_height/target_width, centred,
// sizes and offsets truncated to integers.
CropBox AspectCrop(int64_t height, int64_t width, int64_t target_height, int64_t target_width);

// The region of an image of this size that ResizeImage samples.
CropBox SampledRegion(int64_t height, int64_t width, const ImageSpec& spec);

// Writes spec.height x spec.width x image.channels floats to `out`.
// REQUIRES: image.channels == spec.channels.
void ResizeImage(const DecodedImage& image, const ImageSpec& spec, float* out);

}  // namespace edl::data
