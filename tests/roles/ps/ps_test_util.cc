#include "ps_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>

namespace edl::roles::ps::testing {
namespace fs = std::filesystem;

CompiledModel MakeModel(const std::string& optimizer_json, uint64_t seed,
                        const std::string& initializer_json) {
  const std::string init =
      initializer_json.empty() ? "" : ", \"embeddings_initializer\": " + initializer_json;
  return MakeModelOf(R"(
    {"class_name": "InputLayer", "config": {"name": "ids", "batch_input_shape": [null, 3], "dtype": "int32"}},
    {"class_name": "Embedding", "config": {"name": "emb", "input_dim": 50, "output_dim": 4)" +
                         init + R"(}},
    {"class_name": "Flatten", "config": {"name": "flat"}},
    {"class_name": "Dense", "config": {"name": "hidden", "units": 3, "activation": "relu"}},
    {"class_name": "Dense", "config": {"name": "dense", "units": 2}})",
                     optimizer_json, seed);
}

CompiledModel MakeModelOf(const std::string& layers_json, const std::string& optimizer_json,
                          uint64_t seed) {
  ScratchDir dir;
  const std::string spec =
      R"({"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [)" +
      layers_json + R"(]}}, "loss": "mse", "optimizer": )" + optimizer_json + "}";
  const std::string path = dir.path() + "/model.json";
  std::ofstream(path) << spec;
  ModelOptions options;
  options.model_def = path;
  options.seed = seed;
  auto cm = CompileModel(options);
  EDL_CHECK(cm.ok()) << cm.status().message();
  return std::move(cm).value();
}

ParameterServerOptions Shard(int index, int num_ps) {
  ParameterServerOptions options;
  options.ps_index = index;
  options.num_ps = num_ps;
  return options;
}

std::unique_ptr<ParameterServer> MakePs(const ParameterServerOptions& options,
                                        const std::string& optimizer_json, uint64_t seed) {
  auto ps = ParameterServer::Create(options, MakeModel(optimizer_json, seed));
  EDL_CHECK(ps.ok()) << ps.status().message();
  return std::move(ps).value();
}

ScratchDir::ScratchDir() {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() / ("edl_ps_test_" + std::to_string(::getpid()) + "_" +
                                       std::to_string(counter.fetch_add(1)));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

nn::Parameter* Find(nn::keras::Model& model, const std::string& name) {
  for (nn::Parameter* p : model.parameters()) {
    if (p->name == name) return p;
  }
  EDL_CHECK(false) << "no parameter " << name;
  return nullptr;
}

std::map<std::string, tensor::Tensor> Pull(ParameterServer& ps) {
  auto r = ps.PullDense(protocol::PullDenseRequest{});
  EDL_CHECK(r.ok()) << r.status().message();
  std::map<std::string, tensor::Tensor> out;
  for (auto& t : r->params) out[t.name] = t.value;
  return out;
}

tensor::Tensor Rows(ParameterServer& ps, const std::string& table,
                    const std::vector<int64_t>& ids) {
  protocol::PullRowsRequest r{table,
                              tensor::Tensor::FromInts({static_cast<int64_t>(ids.size())}, ids)};
  auto out = ps.PullRows(r);
  EDL_CHECK(out.ok()) << out.status().message();
  return out->values;
}

tensor::Tensor Ramp(const tensor::Shape& shape, float start, float step) {
  tensor::Tensor t = tensor::Tensor::Empty(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = start + step * i;
  return t;
}

}  // namespace edl::roles::ps::testing
