#include "data/image_decoder.h"

#include <cstring>

namespace edl::data {

std::string ImageKind(std::string_view bytes) {
  if (bytes.size() >= 3 && static_cast<uint8_t>(bytes[0]) == 0xFF &&
      static_cast<uint8_t>(bytes[1]) == 0xD8 && static_cast<uint8_t>(bytes[2]) == 0xFF) {
    return "JPEG";
  }
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), "\x89PNG\r\n\x1a\n", 8) == 0) return "PNG";
  return "";
}

namespace {

std::string Printable(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

Result<DecodedImage> DecodeImage(std::string_view bytes, const DecodeOptions& options) {
  const std::string kind = ImageKind(bytes);
  if (kind == "JPEG") return DecodeJpeg(bytes, options);
  if (kind == "PNG") return DecodePng(bytes, options);
  if (bytes.empty()) return InvalidArgument("is empty, not a JPEG or PNG image");
  return InvalidArgument("is not a JPEG or PNG image (it starts with \"" + Printable(bytes) +
                         "\")");
}

void ConvertChannels(const uint8_t* in, int64_t from, int64_t to, DecodedImage* image) {
  const int64_t n = image->height * image->width;
  image->channels = to;
  image->pixels.resize(static_cast<size_t>(n * to));
  uint8_t* out = image->pixels.data();
  if (to == 1) {
    if (from <= 2) {
      for (int64_t i = 0; i < n; ++i) out[i] = in[i * from];
      return;
    }
    // PIL's convert("L"): L = R * 299/1000 + G * 587/1000 + B * 114/1000,
    // in 16-bit fixed point, rounded.
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* p = in + i * from;
      out[i] = static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = in + i * from;
    if (from <= 2) {
      out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = p[0];
    } else {
      out[3 * i] = p[0];
      out[3 * i + 1] = p[1];
      out[3 * i + 2] = p[2];
    }
  }
}

}  // namespace edl::data
