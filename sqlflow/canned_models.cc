#include "sqlflow/canned_models.h"

#include <nlohmann/json.hpp>
#include <set>

namespace edl::sqlflow {
namespace {

using json = nlohmann::json;

const std::set<std::string>& Names() {
  static const std::set<std::string> names = {"DNNClassifier",   "DNNRegressor", "LinearClassifier",
                                              "LinearRegressor", "WideAndDeep",  "DeepFM"};
  return names;
}

struct Options {
  std::vector<int64_t> hidden_units = {64, 32};
  int64_t n_classes = 0;
  int64_t embedding_dim = 8;
  std::string optimizer = "Adam";
  double learning_rate = 0.001;
};

Result<Options> ReadOptions(const std::vector<Attribute>& with, const FeatureSpec& f) {
  Options o;
  if (f.embedding_dim > 0) o.embedding_dim = f.embedding_dim;
  o.n_classes = f.num_classes;
  static const std::set<std::string> kOptimizers = {"Adam",   "SGD",  "Adagrad", "Adadelta",
                                                    "Adamax", "Ftrl", "Nadam",   "RMSprop"};
  for (const Attribute& a : with) {
    if (a.name.rfind("model.", 0) != 0) continue;
    const std::string key = a.name.substr(6);
    const json v = json::parse(a.json, nullptr, false);
    auto bad = [&](const std::string& what) {
      return InvalidArgument(a.where + ": " + a.name + " " + what + ", got " + a.json);
    };
    if (key == "hidden_units" || key == "dnn_hidden_units") {
      if (!v.is_array() || v.empty()) return bad("must be a list of layer sizes like [64, 32]");
      o.hidden_units.clear();
      for (const json& u : v) {
        if (!u.is_number_integer() || u.get<int64_t>() < 1) {
          return bad("must be a list of positive integers");
        }
        o.hidden_units.push_back(u.get<int64_t>());
      }
    } else if (key == "n_classes") {
      if (!v.is_number_integer() || v.get<int64_t>() < 2) return bad("must be an integer >= 2");
      o.n_classes = v.get<int64_t>();
    } else if (key == "embedding_dim") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1) return bad("must be a positive integer");
      o.embedding_dim = v.get<int64_t>();
    } else if (key == "optimizer") {
      if (!v.is_string() || !kOptimizers.count(v.get<std::string>())) {
        return bad("must be one of Adam, SGD, Adagrad, Adadelta, Adamax, Ftrl, Nadam, RMSprop");
      }
      o.optimizer = v.get<std::string>();
    } else if (key == "learning_rate") {
      if (!v.is_number() || v.get<double>() <= 0) return bad("must be a positive number");
      o.learning_rate = v.get<double>();
    } else {
      return InvalidArgument(a.where + ": unknown attribute " + a.name +
                             " (a canned model takes model.hidden_units, model.n_classes, "
                             "model.embedding_dim, model.optimizer, model.learning_rate)");
    }
  }
  return o;
}

// A functional model's layers, appended in order.
class Graph {
 public:
  // Adds a layer fed by `inputs`; returns its name.
  std::string Add(const std::string& name, const std::string& cls, json config,
                  const std::vector<std::string>& inputs = {}) {
    config["name"] = name;
    json nodes = json::array();
    if (!inputs.empty()) {
      json node = json::array();
      for (const std::string& in : inputs) node.push_back({in, 0, 0, json::object()});
      nodes.push_back(node);
    }
    layers_.push_back(
        {{"name", name}, {"class_name", cls}, {"config", config}, {"inbound_nodes", nodes}});
    return name;
  }
  std::string Input(const std::string& name, int64_t width, const char* dtype) {
    inputs_.push_back({name, 0, 0});
    return Add(name, "InputLayer", {{"batch_input_shape", {nullptr, width}}, {"dtype", dtype}});
  }
  // `parts` joined along the last axis (one part is itself).
  std::string Join(const std::string& name, const std::vector<std::string>& parts) {
    if (parts.size() == 1) return parts[0];
    return Add(name, "Concatenate", {{"axis", -1}}, parts);
  }
  json Model(const std::string& name, const std::string& output) const {
    return {{"class_name", "Functional"},
            {"config",
             {{"name", name},
              {"layers", layers_},
              {"input_layers", inputs_},
              {"output_layers", {{output, 0, 0}}}}}};
  }

 private:
  json layers_ = json::array();
  json inputs_ = json::array();
};

}  // namespace

bool IsCannedModel(const std::string& name) { return Names().count(name) > 0; }

std::string DefaultModel(const FeatureSpec& f) {
  return f.regression ? "DNNRegressor" : "DNNClassifier";
}

Result<std::string> CannedModelSpec(const std::string& name, const std::vector<Attribute>& with,
                                    const FeatureSpec& f) {
  if (!IsCannedModel(name)) return NotFound("no canned model " + name);
  EDL_ASSIGN_OR_RETURN(Options o, ReadOptions(with, f));
  const bool regressor = name == "DNNRegressor" || name == "LinearRegressor" ||
                         ((name == "WideAndDeep" || name == "DeepFM") && f.regression);
  if (!regressor && f.regression) {
    return InvalidArgument(name +
                           " is a classifier, but the LABEL holds values that are not class ids "
                           "0..n-1 (negative or fractional numbers): use a regressor or a text or "
                           "integer label");
  }
  if (!regressor && o.n_classes < 2) o.n_classes = 2;
  if (!regressor && o.n_classes < f.num_classes) {
    return InvalidArgument("model.n_classes is " + std::to_string(o.n_classes) +
                           " but the LABEL has classes up to " + std::to_string(f.num_classes - 1));
  }
  const int64_t out = regressor ? 1 : o.n_classes;
  Graph g;
  std::string numeric, ids;
  if (f.num_numeric > 0) numeric = g.Input("numeric", f.num_numeric, "float32");
  if (f.num_categorical > 0) ids = g.Input("categorical", f.num_categorical, "int32");
  // One weight per id plus the numbers, into `units` outputs.
  auto linear = [&](const std::string& prefix, int64_t units) {
    std::vector<std::string> parts;
    if (!ids.empty()) {
      const std::string e = g.Add(prefix + "_embedding", "Embedding",
                                  {{"input_dim", f.num_ids}, {"output_dim", 1}}, {ids});
      parts.push_back(g.Add(prefix + "_flat", "Flatten", json::object(), {e}));
    }
    if (!numeric.empty()) parts.push_back(numeric);
    return g.Add(prefix, "Dense", {{"units", units}}, {g.Join(prefix + "_in", parts)});
  };
  std::string shared_embedding;
  auto embedded = [&]() {
    if (shared_embedding.empty() && !ids.empty()) {
      shared_embedding = g.Add("embedding", "Embedding",
                               {{"input_dim", f.num_ids}, {"output_dim", o.embedding_dim}}, {ids});
    }
    return shared_embedding;
  };
  auto deep = [&](const std::string& prefix, bool bias) {
    std::vector<std::string> parts;
    if (!ids.empty())
      parts.push_back(g.Add(prefix + "_flat", "Flatten", json::object(), {embedded()}));
    if (!numeric.empty()) parts.push_back(numeric);
    std::string x = g.Join(prefix + "_in", parts);
    for (size_t i = 0; i < o.hidden_units.size(); ++i) {
      x = g.Add(prefix + "_" + std::to_string(i + 1), "Dense",
                {{"units", o.hidden_units[i]}, {"activation", "relu"}}, {x});
    }
    return g.Add(prefix, "Dense", {{"units", out}, {"use_bias", bias}}, {x});
  };
  std::string logits;
  if (name == "DNNClassifier" || name == "DNNRegressor") {
    logits = deep("dnn", true);
  } else if (name == "LinearClassifier" || name == "LinearRegressor") {
    logits = linear("linear", out);
  } else if (name == "WideAndDeep") {
    logits = g.Add("logits", "Add", json::object(), {linear("wide", out), deep("deep", false)});
  } else {  // DeepFM
    std::vector<std::string> parts = {linear("linear", out)};
    if (f.num_categorical > 1) {
      // Pairwise interactions of the fields' embeddings: ((sum v)^2 - sum v^2) / 2,
      // from the mean over fields (scaled by the Dense that follows).
      const std::string fields =
          g.Add("fields", "Reshape", {{"target_shape", {f.num_categorical, 1, o.embedding_dim}}},
                {embedded()});
      const std::string mean =
          g.Add("field_mean", "GlobalAveragePooling2D", json::object(), {fields});
      const std::string square_of_sum =
          g.Add("square_of_sum", "Multiply", json::object(), {mean, mean});
      const std::string squares = g.Add("squares", "Multiply", json::object(), {fields, fields});
      const std::string sum_of_squares =
          g.Add("sum_of_squares", "GlobalAveragePooling2D", json::object(), {squares});
      const std::string terms =
          g.Add("fm_terms", "Concatenate", {{"axis", -1}}, {square_of_sum, sum_of_squares});
      parts.push_back(g.Add("fm", "Dense", {{"units", out}, {"use_bias", false}}, {terms}));
    }
    parts.push_back(deep("deep", false));
    logits = g.Add("logits", "Add", json::object(), parts);
  }
  json spec;
  spec["model"] = g.Model(name, logits);
  if (regressor) {
    spec["loss"] = "mean_squared_error";
    spec["metrics"] = {"mae"};
  } else {
    spec["loss"] = {{"class_name", "SparseCategoricalCrossentropy"},
                    {"config", {{"from_logits", true}}}};
    spec["metrics"] = {"accuracy"};
  }
  spec["optimizer"] = {{"class_name", o.optimizer},
                       {"config", {{"learning_rate", o.learning_rate}}}};
  spec["input"] = json::parse(f.input_json);
  return spec.dump();
}

}  // namespace edl::sqlflow
