#include "nn/layers/merging.h"

#include "nn/functional.h"
#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

Result<std::unique_ptr<Layer>> Concatenate::FromConfig(const std::string& name,
                                                       const nlohmann::json& config) {
  std::unique_ptr<Concatenate> l(new Concatenate(name));
  ConfigReader r(config);
  l->axis_ = r.Axis("axis", -1);
  EDL_RETURN_IF_ERROR(r.status());
  if (l->axis_ == 0) return InvalidArgument("axis 0 is the batch axis");
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Concatenate::OutputShapes(const std::vector<Shape>& in) {
  if (in.size() < 2) {
    return Error("expects at least 2 inputs, got " + std::to_string(in.size()));
  }
  int64_t rank = static_cast<int64_t>(in[0].size());
  // Axis counted without the batch axis.
  int64_t a = axis_ < 0 ? axis_ + rank : axis_ - 1;
  if (a < 0 || a >= rank) {
    return Error("axis " + std::to_string(axis_) + " is out of range for input " +
                 tensor::ShapeString(in[0]));
  }
  Shape out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    bool ok = static_cast<int64_t>(in[i].size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d) {
      if (d != a && in[i][d] != in[0][d]) ok = false;
    }
    if (!ok) {
      std::string shapes;
      for (const auto& s : in) shapes += (shapes.empty() ? "" : ", ") + tensor::ShapeString(s);
      return Error("inputs must match except along axis " + std::to_string(axis_) +
                   ", got " + shapes);
    }
    out[a] += in[i][a];
  }
  return std::vector<Shape>{out};
}

std::vector<Var> Concatenate::Call(const std::vector<Var>& inputs,
                                   const CallContext& ctx) {
  int rank = static_cast<int>(inputs[0].shape().size());
  int axis = static_cast<int>(axis_ < 0 ? axis_ + rank : axis_);
  return {fn::Concat(inputs, axis)};
}

nlohmann::json Concatenate::Config() const {
  nlohmann::json c = Layer::Config();
  c["axis"] = axis_;
  return c;
}

Result<std::unique_ptr<Layer>> ElementwiseMerge::FromConfig(
    Op op, const std::string& name, const nlohmann::json& config) {
  return std::unique_ptr<Layer>(new ElementwiseMerge(op, name));
}

const char* ElementwiseMerge::class_name() const {
  switch (op_) {
    case Op::kAdd: return "Add";
    case Op::kSubtract: return "Subtract";
    case Op::kMultiply: return "Multiply";
    case Op::kAverage: return "Average";
    case Op::kMaximum: return "Maximum";
    case Op::kMinimum: return "Minimum";
  }
  return "Add";
}

Result<std::vector<Shape>> ElementwiseMerge::OutputShapes(
    const std::vector<Shape>& in) {
  if (op_ == Op::kSubtract && in.size() != 2) {
    return Error("expects exactly 2 inputs, got " + std::to_string(in.size()));
  }
  if (in.size() < 2) {
    return Error("expects at least 2 inputs, got " + std::to_string(in.size()));
  }
  Shape out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    Shape next;
    if (in[i].size() != out.size() || !tensor::BroadcastShapes(out, in[i], &next)) {
      return Error("input shapes " + tensor::ShapeString(out) + " and " +
                   tensor::ShapeString(in[i]) + " are not compatible");
    }
    out = next;
  }
  return std::vector<Shape>{out};
}

std::vector<Var> ElementwiseMerge::Call(const std::vector<Var>& inputs,
                                        const CallContext& ctx) {
  Var y = inputs[0];
  for (size_t i = 1; i < inputs.size(); ++i) {
    switch (op_) {
      case Op::kAdd:
      case Op::kAverage: y = fn::Add(y, inputs[i]); break;
      case Op::kSubtract: y = fn::Sub(y, inputs[i]); break;
      case Op::kMultiply: y = fn::Mul(y, inputs[i]); break;
      case Op::kMaximum: y = fn::Maximum(y, inputs[i]); break;
      case Op::kMinimum: y = fn::Minimum(y, inputs[i]); break;
    }
  }
  if (op_ == Op::kAverage) y = fn::Affine(y, 1.f / static_cast<float>(inputs.size()));
  return {y};
}

}  // namespace edl::nn::layers
