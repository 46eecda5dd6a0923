// DecodeImage: the bytes of a JPEG or PNG file (told apart by their
// signatures, not by names) to 8-bit pixels of the channels a model takes.
// JPEG goes through libjpeg-turbo's TurboJPEG API, PNG through libpng's
// simplified API; both are loaded at run time (data/shared_library.h), so
// only image data needs them. Thread-safe.
//
// Channels: grayscale stays, or is repeated into RGB; RGB becomes gray as
// PIL's convert("L") computes it (ITU-R 601-2 luma, rounded); alpha is
// dropped (as TensorFlow's decode_png with fewer channels and PIL's
// convert("RGB")); palettes are expanded. A JPEG wanted gray is decoded to
// its luma channel (libjpeg's own conversion, as tf.io.decode_jpeg).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace edl::data {

struct DecodedImage {
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;         // 1 or 3
  std::vector<uint8_t> pixels;  // height x width x channels, row major
};

struct DecodeOptions {
  int64_t channels = 3;  // 1 or 3
  // Images with more pixels are refused from their header, before any
  // pixel is allocated.
  int64_t max_pixels = 89478485;
  // > 0: a JPEG may be decoded at 1/2, 1/4 or 1/8 of its size (DCT
  // scaling) when the region ResizeImage samples (the whole image, or with
  // crop_to_aspect_ratio Keras' centred crop) still has at least
  // cover_height x cover_width pixels.
  int64_t cover_height = 0;
  int64_t cover_width = 0;
  bool crop_to_aspect_ratio = false;
};

// Errors (InvalidArgument, without the file's name: callers add it) say
// what is wrong: not a JPEG or PNG, truncated or corrupt data (a PNG chunk's
// CRC, a JPEG that ends early), a CMYK JPEG, a 16-bit PNG, too many pixels.
// FailedPrecondition when the library cannot be loaded.
Result<DecodedImage> DecodeImage(std::string_view bytes, const DecodeOptions& options);

// What the bytes' signature says ("JPEG", "PNG"), or "" for neither.
std::string ImageKind(std::string_view bytes);

// The codecs, one file each (data/jpeg_decoder.cc, data/png_decoder.cc).
Result<DecodedImage> DecodeJpeg(std::string_view bytes, const DecodeOptions& options);
Result<DecodedImage> DecodePng(std::string_view bytes, const DecodeOptions& options);

// Rewrites pixels of `from` channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA)
// into `image` with `to` channels (1 or 3), as DecodeImage describes.
void ConvertChannels(const uint8_t* pixels, int64_t from, int64_t to, DecodedImage* image);

}  // namespace edl::data
