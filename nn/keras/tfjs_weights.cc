#include "nn/keras/tfjs_weights.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "nn/keras/json_text.h"

namespace edl::nn::keras {

Result<std::vector<NamedTensor>> ReadTfjsWeights(const std::string& manifest_json,
                                                 const std::string& dir,
                                                 const std::string& origin) {
  EDL_ASSIGN_OR_RETURN(nlohmann::json manifest, ParseJsonText(manifest_json, origin));
  auto fail = [&](const std::string& path, const std::string& m) {
    return InvalidArgument(origin + ": " + path + ": " + m);
  };
  if (!manifest.is_array()) return fail("weightsManifest", "must be a list of groups");
  std::vector<NamedTensor> out;
  for (size_t g = 0; g < manifest.size(); ++g) {
    const nlohmann::json& group = manifest[g];
    std::string gp = IndexPath("weightsManifest", g);
    if (!group.is_object() || !group.contains("paths") || !group["paths"].is_array() ||
        !group.contains("weights") || !group["weights"].is_array()) {
      return fail(gp, "a group needs \"paths\" and \"weights\" lists");
    }
    std::string bytes;
    for (const auto& p : group["paths"]) {
      if (!p.is_string()) return fail(JoinPath(gp, "paths"), "must hold file names");
      std::string path = dir.empty() ? p.get<std::string>() : dir + "/" + p.get<std::string>();
      Result<std::string> shard = ReadFile(path);
      if (!shard.ok()) return shard.status().WithPrefix(origin + ": " + gp);
      bytes += *shard;
    }
    size_t offset = 0;
    for (size_t w = 0; w < group["weights"].size(); ++w) {
      const nlohmann::json& spec = group["weights"][w];
      std::string wp = IndexPath(JoinPath(gp, "weights"), w);
      if (!spec.is_object() || !spec.contains("name") || !spec["name"].is_string() ||
          !spec.contains("shape") || !spec["shape"].is_array()) {
        return fail(wp, "a weight needs \"name\" and \"shape\"");
      }
      std::string name = spec["name"].get<std::string>();
      std::string dtype = spec.value("dtype", "float32");
      if (dtype != "float32") {
        return fail(
            wp, "weight \"" + name + "\" has dtype \"" + dtype + "\"; only float32 is supported");
      }
      if (spec.contains("quantization")) {
        return fail(wp,
                    "weight \"" + name + "\" is quantized; quantized weights are not supported");
      }
      tensor::Shape shape;
      for (const auto& d : spec["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) {
          return fail(wp, "shape must hold non-negative integers, got " + spec["shape"].dump());
        }
        shape.push_back(d.get<int64_t>());
      }
      Tensor t = Tensor::Empty(shape);
      size_t n = t.bytes();
      if (offset + n > bytes.size()) {
        return fail(wp, "the shards of group " + std::to_string(g) + " hold " +
                            std::to_string(bytes.size()) + " bytes, too few for weight \"" + name +
                            "\" " + tensor::ShapeString(shape));
      }
      std::memcpy(t.raw_data(), bytes.data() + offset, n);
      offset += n;
      out.push_back({name, t});
    }
    if (offset != bytes.size()) {
      return fail(gp, "the shards hold " + std::to_string(bytes.size()) +
                          " bytes but the weights use " + std::to_string(offset));
    }
  }
  return out;
}

}  // namespace edl::nn::keras
