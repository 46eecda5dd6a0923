// CategoryEncoding (Keras preprocessing layer): integer ids in
// [0, num_tokens) to dense float vectors of num_tokens. output_mode
// "multi_hot" (default): 1 where an id of the sample occurs; "count": how
// many times; "one_hot": one vector per id (ids [] or [1] -> [num_tokens],
// [k] -> [k, num_tokens]). No weights, no gradient. Float ids (a CSV column)
// are truncated; an id outside [0, num_tokens) is checked like Embedding's.
#pragma once

#include "nn/layers/layer.h"

namespace edl::nn::layers {

class CategoryEncoding : public Layer {
 public:
  enum class Mode { kMultiHot, kCount, kOneHot };
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "CategoryEncoding"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;
  int64_t id_limit() const override { return num_tokens_; }
  const char* id_limit_field() const override { return "num_tokens"; }

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;

 private:
  using Layer::Layer;
  int64_t num_tokens_ = 0;
  Mode mode_ = Mode::kMultiHot;
};

}  // namespace edl::nn::layers
