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

RowInitializer::RowInitializer(const EmbeddingSpec& spec, uint64_t seed)
    : options_(spec.initializer),
      name_hash_(Fnv1a64(spec.name)),
      seed_(seed),
      dim_(spec.dim),
      identity_(spec.initializer.name == "identity") {
  const std::string& name = options_.name;
  const bool variance_scaling = name == "variance_scaling" || name.rfind("glorot_", 0) == 0 ||
                                name.rfind("he_", 0) == 0 || name.rfind("lecun_", 0) == 0;
  if (variance_scaling) {
    // The parsed options carry the preset's scale, mode and distribution;
    // fold the table's fan into the scale and draw with fan_in = 1.
    const nn::Fans fans = nn::ComputeFans({spec.input_dim, spec.dim});
    double fan = fans.fan_in;
    if (options_.mode == "fan_out") fan = fans.fan_out;
    if (options_.mode == "fan_avg") fan = (fans.fan_in + fans.fan_out) / 2;
    options_.scale = options_.scale / std::max(1.0, fan);
    options_.name = "variance_scaling";
    options_.mode = "fan_in";
  }
}

void RowInitializer::operator()(int64_t id, float* out) const {
  if (identity_) {
    std::fill(out, out + dim_, 0.f);
    if (id < dim_) out[id] = static_cast<float>(options_.gain);
    return;
  }
  nn::SplitMix64Rng rng(
      SplitMix64(name_hash_ ^ SplitMix64(seed_ ^ SplitMix64(static_cast<uint64_t>(id)))));
  nn::InitializeInto(options_, {1, dim_}, rng, out);
}

void InitialRow(const EmbeddingSpec& spec, uint64_t seed, int64_t id, float* out) {
  RowInitializer(spec, seed)(id, out);
}

}  // namespace edl::roles::ps
