// Embedding: looks up rows of a [input_dim, output_dim] table for integer
// ids of any shape -> [ids..., output_dim] (Keras Embedding). Float ids (a
// TF.js float input) are truncated to integers. The gradient is sparse
// (Parameter::sparse_grad). With mask_zero, id 0 is padding: the output
// carries a mask, 0 where the id is 0 (ids of rank 1, [N, steps]).
// REQUIRES at call time: 0 <= id < input_dim (checked; the data pipeline
// validates user data before it gets here).
#pragma once

#include "nn/layers/layer.h"
#include "nn/layers/weight_config.h"

namespace edl::nn::layers {

class Embedding : public Layer {
 public:
  static Result<std::unique_ptr<Layer>> FromConfig(const std::string& name,
                                                   const nlohmann::json& config);
  const char* class_name() const override { return "Embedding"; }
  std::vector<Var> Call(const std::vector<Var>& inputs, const CallContext& ctx) override;
  nlohmann::json Config() const override;
  MaskSupport mask_support() const override { return MaskSupport::kUse; }
  bool OutputMasked(const std::vector<bool>&) const override { return mask_zero_; }
  std::vector<Var> CallWithMasks(const std::vector<Var>& inputs, const std::vector<Tensor>& masks,
                                 const CallContext& ctx, Tensor* mask) override;
  // Rows of the table: ids must be in [0, input_dim()).
  int64_t input_dim() const { return input_dim_; }
  int64_t id_limit() const override { return input_dim_; }
  const char* id_limit_field() const override { return "input_dim"; }

 protected:
  Result<std::vector<Shape>> OutputShapes(const std::vector<Shape>& in) override;
  Status CreateWeights(const std::vector<Shape>& in, std::mt19937_64& rng) override;

 private:
  using Layer::Layer;
  // The rows for `input`'s ids (range-checked); with `mask`, also sets the
  // mask of ids that are not 0.
  Var Lookup(const Var& input, Tensor* mask);
  int64_t input_dim_ = 0, output_dim_ = 0;
  bool mask_zero_ = false;
  WeightInit init_;
  WeightPenalty reg_;
  Parameter* embeddings_ = nullptr;
};

}  // namespace edl::nn::layers
