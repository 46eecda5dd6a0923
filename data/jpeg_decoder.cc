// JPEG through libjpeg-turbo's TurboJPEG API, loaded at run time.
#include <turbojpeg.h>

#include <mutex>

#include "data/image_decoder.h"
#include "data/image_resize.h"
#include "data/shared_library.h"

namespace edl::data {
namespace {

struct TurboJpegApi {
  tjhandle (*init_decompress)() = nullptr;
  int (*decompress_header3)(tjhandle, const unsigned char*, unsigned long, int*, int*, int*,
                            int*) = nullptr;
  int (*decompress2)(tjhandle, const unsigned char*, unsigned long, unsigned char*, int, int, int,
                     int, int) = nullptr;
  char* (*error_str2)(tjhandle) = nullptr;
  int (*destroy)(tjhandle) = nullptr;
};

Result<const TurboJpegApi*> LoadTurboJpeg() {
  static std::once_flag once;
  static TurboJpegApi api;
  static Status loaded = Status::Ok();
  std::call_once(once, [] {
    auto lib = SharedLibrary::Open({"libturbojpeg.so.0", "libturbojpeg.so"}, "JPEG decoding",
                                   "install libjpeg-turbo's TurboJPEG library (Debian: apt-get "
                                   "install libturbojpeg0; edl's image: scripts/build-image.sh "
                                   "--extra /usr/lib/x86_64-linux-gnu/libturbojpeg.so.0)");
    if (!lib.ok()) {
      loaded = lib.status();
      return;
    }
    loaded = [&]() -> Status {
      EDL_RETURN_IF_ERROR(lib->Find("tjInitDecompress", &api.init_decompress));
      EDL_RETURN_IF_ERROR(lib->Find("tjDecompressHeader3", &api.decompress_header3));
      EDL_RETURN_IF_ERROR(lib->Find("tjDecompress2", &api.decompress2));
      EDL_RETURN_IF_ERROR(lib->Find("tjGetErrorStr2", &api.error_str2));
      EDL_RETURN_IF_ERROR(lib->Find("tjDestroy", &api.destroy));
      return Status::Ok();
    }();
  });
  if (!loaded.ok()) return loaded;
  return &api;
}

// One decompressor per thread, kept for the thread's life.
class Decompressor {
 public:
  explicit Decompressor(const TurboJpegApi* api) : api_(api), handle_(api->init_decompress()) {}
  ~Decompressor() {
    if (handle_ != nullptr) api_->destroy(handle_);
  }
  tjhandle get() const { return handle_; }

 private:
  const TurboJpegApi* api_;
  tjhandle handle_;
};

}  // namespace

Result<DecodedImage> DecodeJpeg(std::string_view bytes, const DecodeOptions& options) {
  EDL_ASSIGN_OR_RETURN(const TurboJpegApi* api, LoadTurboJpeg());
  thread_local Decompressor decompressor(api);
  tjhandle tj = decompressor.get();
  if (tj == nullptr) return Internal("cannot start a JPEG decompressor");
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto size = static_cast<unsigned long>(bytes.size());
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (api->decompress_header3(tj, data, size, &width, &height, &subsampling, &colorspace) != 0) {
    return InvalidArgument(std::string("is a corrupt JPEG (") + api->error_str2(tj) + ")");
  }
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
    return InvalidArgument(
        "is a CMYK JPEG, which edl does not read (convert it to RGB, e.g. with ImageMagick's "
        "convert -colorspace sRGB)");
  }
  if (width <= 0 || height <= 0 || static_cast<int64_t>(width) * height > options.max_pixels) {
    return InvalidArgument("is a JPEG of " + std::to_string(width) + " x " +
                           std::to_string(height) + " pixels, more than the limit of " +
                           std::to_string(options.max_pixels) + " (the spec's image.max_pixels)");
  }
  // The smallest of 1/8, 1/4, 1/2 whose sampled region still covers the
  // target (TurboJPEG rounds scaled sizes up, as here).
  int scaled_w = width, scaled_h = height;
  if (options.cover_height > 0 && options.cover_width > 0) {
    for (int denom : {8, 4, 2}) {
      const int w = (width + denom - 1) / denom, h = (height + denom - 1) / denom;
      const CropBox r = options.crop_to_aspect_ratio
                            ? AspectCrop(h, w, options.cover_height, options.cover_width)
                            : CropBox{0, 0, h, w};
      if (r.height >= options.cover_height && r.width >= options.cover_width) {
        scaled_w = w;
        scaled_h = h;
        break;
      }
    }
  }
  const int pixel_format = options.channels == 1 ? TJPF_GRAY : TJPF_RGB;
  DecodedImage image;
  image.height = scaled_h;
  image.width = scaled_w;
  image.channels = options.channels;
  image.pixels.resize(static_cast<size_t>(scaled_h) * scaled_w * options.channels);
  // Warnings (data that ends early, corrupt entropy codes) fail the image,
  // as they fail PIL; progressive scans are limited against a
  // decompression bomb of scans.
  const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS | TJFLAG_ACCURATEDCT;
  if (api->decompress2(tj, data, size, image.pixels.data(), scaled_w, 0, scaled_h, pixel_format,
                       flags) != 0) {
    return InvalidArgument(std::string("is a corrupt or truncated JPEG (") + api->error_str2(tj) +
                           ")");
  }
  return image;
}

}  // namespace edl::data
