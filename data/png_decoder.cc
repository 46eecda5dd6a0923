// PNG through libpng's simplified API (png_image), loaded at run time.
#include <png.h>

#include <cstring>
#include <mutex>

#include "data/image_decoder.h"
#include "data/shared_library.h"

namespace edl::data {
namespace {

struct PngApi {
  int (*begin_read_from_memory)(png_imagep, png_const_voidp, size_t) = nullptr;
  int (*finish_read)(png_imagep, png_const_colorp, void*, png_int_32, void*) = nullptr;
  void (*free_image)(png_imagep) = nullptr;
};

Result<const PngApi*> LoadPng() {
  static std::once_flag once;
  static PngApi api;
  static Status loaded = Status::Ok();
  std::call_once(once, [] {
    auto lib = SharedLibrary::Open({"libpng16.so.16", "libpng16.so"}, "PNG decoding",
                                   "install libpng 1.6 (Debian: apt-get install libpng16-16; edl's "
                                   "image: scripts/build-image.sh --extra "
                                   "/usr/lib/x86_64-linux-gnu/libpng16.so.16)");
    if (!lib.ok()) {
      loaded = lib.status();
      return;
    }
    loaded = [&]() -> Status {
      EDL_RETURN_IF_ERROR(
          lib->Find("png_image_begin_read_from_memory", &api.begin_read_from_memory));
      EDL_RETURN_IF_ERROR(lib->Find("png_image_finish_read", &api.finish_read));
      EDL_RETURN_IF_ERROR(lib->Find("png_image_free", &api.free_image));
      return Status::Ok();
    }();
  });
  if (!loaded.ok()) return loaded;
  return &api;
}

// Frees the png_image however the read ends.
class PngImage {
 public:
  explicit PngImage(const PngApi* api) : api_(api) {
    std::memset(&image_, 0, sizeof(image_));
    image_.version = PNG_IMAGE_VERSION;
  }
  ~PngImage() { api_->free_image(&image_); }
  png_image* get() { return &image_; }

 private:
  const PngApi* api_;
  png_image image_;
};

}  // namespace

Result<DecodedImage> DecodePng(std::string_view bytes, const DecodeOptions& options) {
  EDL_ASSIGN_OR_RETURN(const PngApi* api, LoadPng());
  PngImage png(api);
  png_image* image = png.get();
  if (!api->begin_read_from_memory(image, bytes.data(), bytes.size())) {
    return InvalidArgument(std::string("is a corrupt PNG (") + image->message + ")");
  }
  const int64_t width = image->width, height = image->height;
  if (width * height > options.max_pixels) {
    return InvalidArgument("is a PNG of " + std::to_string(width) + " x " + std::to_string(height) +
                           " pixels, more than the limit of " + std::to_string(options.max_pixels) +
                           " (the spec's image.max_pixels)");
  }
  if (image->format & PNG_FORMAT_FLAG_LINEAR) {
    return InvalidArgument(
        "is a 16-bit PNG, which edl does not read (convert it to 8 bits, e.g. with ImageMagick's "
        "convert -depth 8)");
  }
  // The file's own channels at 8 bits (palettes expanded, alpha kept so
  // that libpng composites nothing); converted to the wanted channels here.
  const bool color = image->format & PNG_FORMAT_FLAG_COLOR;
  const bool alpha = image->format & PNG_FORMAT_FLAG_ALPHA;
  image->format = (color ? PNG_FORMAT_FLAG_COLOR : 0u) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0u);
  const int64_t from = (color ? 3 : 1) + (alpha ? 1 : 0);
  DecodedImage out;
  out.height = height;
  out.width = width;
  std::vector<uint8_t> native(static_cast<size_t>(width * height * from));
  if (!api->finish_read(image, nullptr, native.data(), 0, nullptr)) {
    return InvalidArgument(std::string("is a corrupt or truncated PNG (") + image->message + ")");
  }
  if (from == options.channels) {
    out.channels = from;
    out.pixels = std::move(native);
  } else {
    ConvertChannels(native.data(), from, options.channels, &out);
  }
  return out;
}

}  // namespace edl::data
