#include "roles/ps/embedding_spec.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "roles/ps/partition.h"

namespace edl::roles::ps {
namespace {

using nlohmann::json;

// Collects every Embedding layer config in a Keras JSON (nested models too).
void CollectEmbeddingLayers(const json& j, std::vector<const json*>* out) {
  if (j.is_object()) {
    auto cls = j.find("class_name");
    auto config = j.find("config");
    if (cls != j.end() && cls->is_string() && *cls == "Embedding" && config != j.end() &&
        config->is_object()) {
      out->push_back(&*config);
      return;
    }
    for (const auto& [key, value] : j.items()) CollectEmbeddingLayers(value, out);
  } else if (j.is_array()) {
    for (const json& v : j) CollectEmbeddingLayers(v, out);
  }
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

Result<std::vector<EmbeddingSpec>> FindEmbeddingTables(const nn::keras::Model& model) {
  json keras = json::parse(model.ToKerasJson(), nullptr, false);
  if (keras.is_discarded()) return Internal("model JSON does not parse");
  std::vector<const json*> layers;
  CollectEmbeddingLayers(keras, &layers);
  std::map<std::string, EmbeddingSpec> by_name;
  for (const json* c : layers) {
    EmbeddingSpec spec;
    const std::string layer = c->value("name", "");
    spec.name = layer + "/embeddings";
    spec.input_dim = c->value("input_dim", int64_t{0});
    spec.dim = c->value("output_dim", int64_t{0});
    const json init = c->value("embeddings_initializer", json("uniform"));
    auto options =
        nn::InitializerFromJson(init.dump(), "layer \"" + layer + "\" embeddings_initializer");
    if (!options.ok()) return options.status();
    spec.initializer = *options;
    by_name[spec.name] = spec;
  }
  std::vector<EmbeddingSpec> out;
  for (const nn::Parameter* p : model.parameters()) {
    auto it = by_name.find(p->name);
    if (it != by_name.end()) {
      EDL_CHECK_EQ(p->value.dim(0), it->second.input_dim) << p->name;
      EDL_CHECK_EQ(p->value.dim(1), it->second.dim) << p->name;
      out.push_back(it->second);
    } else if (IsEmbeddingTable(p->name)) {
      return InvalidArgument("weight \"" + p->name +
                             "\" ends in \"/embeddings\" but is not an "
                             "Embedding layer's table; rename the layer");
    }
  }
  return out;
}

void InitialRow(const EmbeddingSpec& spec, uint64_t seed, int64_t id, float* out) {
  std::mt19937_64 rng(
      SplitMix64(Fnv1a64(spec.name) ^ SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(id)))));
  nn::InitializerOptions o = spec.initializer;
  const std::string& name = o.name;
  const bool variance_scaling = name == "variance_scaling" || name.rfind("glorot_", 0) == 0 ||
                                name.rfind("he_", 0) == 0 || name.rfind("lecun_", 0) == 0;
  if (variance_scaling) {
    // The parsed options carry the preset's scale, mode and distribution;
    // fold the table's fan into the scale and draw with fan_in = 1.
    const nn::Fans fans = nn::ComputeFans({spec.input_dim, spec.dim});
    double fan = fans.fan_in;
    if (o.mode == "fan_out") fan = fans.fan_out;
    if (o.mode == "fan_avg") fan = (fans.fan_in + fans.fan_out) / 2;
    o.scale = o.scale / std::max(1.0, fan);
    o.name = "variance_scaling";
    o.mode = "fan_in";
  } else if (name == "identity") {
    std::fill(out, out + spec.dim, 0.f);
    if (id < spec.dim) out[id] = static_cast<float>(o.gain);
    return;
  }
  tensor::Tensor row = nn::Initialize(o, {1, spec.dim}, rng);
  std::copy(row.f32(), row.f32() + spec.dim, out);
}

}  // namespace edl::roles::ps
