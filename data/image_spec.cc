#include "data/image_spec.h"

#include <nlohmann/json.hpp>

namespace edl::data {
namespace {

using nlohmann::json;

const char* InterpolationName(Interpolation i) {
  switch (i) {
    case Interpolation::kBilinear: return "bilinear";
    case Interpolation::kNearest: return "nearest";
    case Interpolation::kArea: return "area";
  }
  return "bilinear";
}

}  // namespace

Result<ImageSpec> ImageSpecFromJson(const json& j, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& what) {
    return InvalidArgument(where + "." + field + ": " + what);
  };
  if (!j.is_object()) {
    return InvalidArgument(where +
                           ": must be an object such as {\"size\": [64, 64], \"channels\": "
                           "3}, got " +
                           j.dump());
  }
  ImageSpec s;
  bool sized = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "size") {
      if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() ||
          !v[1].is_number_integer() || v[0].get<int64_t>() <= 0 || v[1].get<int64_t>() <= 0) {
        return bad(key, "must be [height, width], two positive integers, got " + v.dump());
      }
      s.height = v[0].get<int64_t>();
      s.width = v[1].get<int64_t>();
      if (s.height > 16384 || s.width > 16384) {
        return bad(key, "must be at most 16384 x 16384, got " + v.dump());
      }
      sized = true;
    } else if (key == "channels") {
      if (!v.is_number_integer() || (v.get<int64_t>() != 1 && v.get<int64_t>() != 3)) {
        return bad(key, "must be 1 (grayscale) or 3 (RGB), got " + v.dump());
      }
      s.channels = v.get<int64_t>();
    } else if (key == "interpolation") {
      const std::string name = v.is_string() ? v.get<std::string>() : "";
      if (name == "bilinear") {
        s.interpolation = Interpolation::kBilinear;
      } else if (name == "nearest") {
        s.interpolation = Interpolation::kNearest;
      } else if (name == "area") {
        s.interpolation = Interpolation::kArea;
      } else {
        return bad(key, "must be \"bilinear\", \"nearest\" or \"area\", got " + v.dump());
      }
    } else if (key == "crop_to_aspect_ratio" || key == "dct_scaling") {
      if (!v.is_boolean()) return bad(key, "must be true or false, got " + v.dump());
      (key == "dct_scaling" ? s.dct_scaling : s.crop_to_aspect_ratio) = v.get<bool>();
    } else if (key == "scale" || key == "offset") {
      if (!v.is_number()) return bad(key, "must be a number, got " + v.dump());
      (key == "scale" ? s.scale : s.offset) = v.get<double>();
    } else if (key == "class_names") {
      if (!v.is_array()) return bad(key, "must be a list of strings, got " + v.dump());
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string() || v[i].get<std::string>().empty()) {
          return bad(key + "[" + std::to_string(i) + "]",
                     "must be a non-empty string, got " + v[i].dump());
        }
        const std::string name = v[i].get<std::string>();
        for (size_t k = 0; k < i; ++k) {
          if (s.class_names[k] == name) return bad(key, "names \"" + name + "\" twice");
        }
        s.class_names.push_back(name);
      }
    } else if (key == "max_pixels") {
      if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
        return bad(key, "must be a positive integer, got " + v.dump());
      }
      s.max_pixels = v.get<int64_t>();
    } else if (key == "feature") {
      if (!v.is_string() || v.get<std::string>().empty()) {
        return bad(key, "must be the name of a bytes feature, got " + v.dump());
      }
      s.feature = v.get<std::string>();
    } else {
      return bad(key,
                 "unknown field (expected size, channels, interpolation, crop_to_aspect_ratio, "
                 "dct_scaling, scale, offset, class_names, max_pixels, feature)");
    }
  }
  if (!sized) return bad("size", "is required: [height, width] of the model's image input");
  return s;
}

json ImageSpecToJson(const ImageSpec& s) {
  json j = {{"size", {s.height, s.width}},
            {"channels", s.channels},
            {"interpolation", InterpolationName(s.interpolation)},
            {"crop_to_aspect_ratio", s.crop_to_aspect_ratio},
            {"dct_scaling", s.dct_scaling},
            {"scale", s.scale},
            {"offset", s.offset},
            {"max_pixels", s.max_pixels}};
  if (!s.class_names.empty()) j["class_names"] = s.class_names;
  if (!s.feature.empty()) j["feature"] = s.feature;
  return j;
}

}  // namespace edl::data
