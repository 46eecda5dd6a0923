// Reading TF.js weight shards: a weightsManifest
// ([{"paths": [...], "weights": [{"name", "shape", "dtype"}]}]) names, per
// group, shard files whose bytes concatenated hold the group's weights in
// order as little-endian float32. Only float32 and unquantized weights.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "nn/keras/model.h"

namespace edl::nn::keras {

// `manifest_json` is the weightsManifest value; shard paths are relative to
// `dir`. Errors name `origin` and the manifest entry.
Result<std::vector<NamedTensor>> ReadTfjsWeights(const std::string& manifest_json,
                                                 const std::string& dir, const std::string& origin);

}  // namespace edl::nn::keras
