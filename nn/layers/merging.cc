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
      return Error("inputs must match except along axis " + std::to_string(axis_) + ", got " +
                   shapes);
    }
    out[a] += in[i][a];
  }
  return std::vector<Shape>{out};
}

std::vector<Var> Concatenate::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  int rank = static_cast<int>(inputs[0].shape().size());
  int axis = static_cast<int>(axis_ < 0 ? axis_ + rank : axis_);
  return {fn::Concat(inputs, axis)};
}

nlohmann::json Concatenate::Config() const {
  nlohmann::json c = Layer::Config();
  c["axis"] = axis_;
  return c;
}

Result<std::unique_ptr<Layer>> ElementwiseMerge::FromConfig(Op op, const std::string& name,
                                                            const nlohmann::json& config) {
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

Result<std::vector<Shape>> ElementwiseMerge::OutputShapes(const std::vector<Shape>& in) {
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

std::vector<Var> ElementwiseMerge::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
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

// ---- Dot ---------------------------------------------------------------------

Result<std::unique_ptr<Layer>> Dot::FromConfig(const std::string& name,
                                               const nlohmann::json& config) {
  std::unique_ptr<Dot> l(new Dot(name));
  ConfigReader r(config);
  const nlohmann::json* axes = r.Get("axes");
  if (axes == nullptr) {
    r.Fail("axes", "is required");
  } else if (axes->is_number_integer()) {
    l->axes_ = {axes->get<int64_t>()};
  } else {
    l->axes_ = r.IntList("axes", /*allow_null_entries=*/false);
    if (r.status().ok() && l->axes_.size() != 2) {
      r.Fail("axes", "must be one integer or a list of two, got " + axes->dump());
    }
  }
  for (int64_t a : l->axes_) {
    if (r.status().ok() && a == 0) r.Fail("axes", "cannot contract the batch axis (0)");
  }
  l->normalize_ = r.Bool("normalize", false);
  EDL_RETURN_IF_ERROR(r.status());
  return std::unique_ptr<Layer>(std::move(l));
}

Result<std::vector<Shape>> Dot::OutputShapes(const std::vector<Shape>& in) {
  EDL_RETURN_IF_ERROR(ExpectInputs(in, 2));
  const int64_t rank = static_cast<int64_t>(in[0].size());
  if (rank != static_cast<int64_t>(in[1].size()) || rank < 1 || rank > 2) {
    return Error("supports two inputs of rank 1 or both of rank 2 (without the batch axis), got " +
                 tensor::ShapeString(in[0]) + " and " + tensor::ShapeString(in[1]));
  }
  // Axes counted with the batch axis; negative ones from the end.
  int64_t a[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t given = axes_[axes_.size() == 1 ? 0 : i];
    a[i] = given < 0 ? given + rank : given - 1;
    if (a[i] < 0 || a[i] >= rank) {
      return Error("axes " + std::to_string(given) + " is out of range for input " +
                   tensor::ShapeString(in[i]));
    }
  }
  if (in[0][a[0]] != in[1][a[1]]) {
    return Error("cannot take the dot product of " + tensor::ShapeString(in[0]) + " and " +
                 tensor::ShapeString(in[1]) + " along axes " + std::to_string(a[0] + 1) + " and " +
                 std::to_string(a[1] + 1) + " (" + std::to_string(in[0][a[0]]) +
                 " != " + std::to_string(in[1][a[1]]) + ")");
  }
  rank_ = static_cast<int>(rank);
  a0_ = a[0];
  a1_ = a[1];
  if (rank == 1) return std::vector<Shape>{{1}};
  return std::vector<Shape>{{in[0][1 - a[0]], in[1][1 - a[1]]}};
}

namespace {

// x / sqrt(max(sum(x^2 along axis), 1e-12)), as tf.math.l2_normalize.
Var L2Normalize(const Var& x, int axis) {
  Var sq = fn::ReduceOp(tensor::Reduce::kSum, fn::Mul(x, x), {axis}, /*keepdims=*/true);
  Var floor = Var(Tensor::Scalar(1e-12f, x.value().device()));
  return fn::Div(x, fn::Activation(tensor::Eltwise::kSqrt, fn::Maximum(sq, floor)));
}

}  // namespace

std::vector<Var> Dot::Call(const std::vector<Var>& inputs, const CallContext& ctx) {
  Var x = inputs[0], y = inputs[1];
  if (normalize_) {
    x = L2Normalize(x, static_cast<int>(a0_) + 1);
    y = L2Normalize(y, static_cast<int>(a1_) + 1);
  }
  if (rank_ == 1) {
    return {fn::ReduceOp(tensor::Reduce::kSum, fn::Mul(x, y), {1}, /*keepdims=*/true)};
  }
  // [B, n, m] . [B, p, q]: contract x's axis a0 with y's axis a1.
  return {fn::MatMul(x, y, /*transpose_a=*/a0_ == 0, /*transpose_b=*/a1_ == 1)};
}

nlohmann::json Dot::Config() const {
  nlohmann::json c = Layer::Config();
  c["axes"] = axes_.size() == 1 ? nlohmann::json(axes_[0]) : nlohmann::json(axes_);
  c["normalize"] = normalize_;
  return c;
}

}  // namespace edl::nn::layers
