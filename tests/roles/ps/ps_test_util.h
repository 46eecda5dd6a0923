// Helpers for the parameter-server tests: a small model with an embedding
// table, parameter servers built from it, and scratch directories.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "roles/local/compiled_model.h"
#include "roles/ps/parameter_server.h"

namespace edl::roles::ps::testing {

// The optimizers most tests use: SGD with learning rate 1 (an update is the
// gradient itself) and Adam with 0.01.
inline constexpr char kSgd1[] = R"({"class_name": "SGD", "config": {"learning_rate": 1.0}})";
inline constexpr char kAdam[] = R"({"class_name": "Adam", "config": {"learning_rate": 0.01}})";

// ids [3] -> Embedding "emb" (50 x 4, embeddings_initializer as given) ->
// Flatten -> Dense "hidden" (3) -> Dense "dense" (2). Dense parameters
// split over 2 PS as {dense/*} on PS 0 and {hidden/*} on PS 1.
CompiledModel MakeModel(const std::string& optimizer_json, uint64_t seed = 1,
                        const std::string& initializer_json = "");

// A Sequential model of `layers_json` (the layers' JSON objects, comma
// separated) with loss mse and the given optimizer.
CompiledModel MakeModelOf(const std::string& layers_json, const std::string& optimizer_json,
                          uint64_t seed = 1);

// Options of PS `index` of `num_ps`, everything else default.
ParameterServerOptions Shard(int index, int num_ps);

// A parameter server over MakeModel(optimizer_json, seed).
std::unique_ptr<ParameterServer> MakePs(const ParameterServerOptions& options,
                                        const std::string& optimizer_json, uint64_t seed = 1);

// A fresh directory under the temp dir, removed by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

nn::Parameter* Find(nn::keras::Model& model, const std::string& name);

// A full dense pull of `ps`, by parameter name (checks it succeeds).
std::map<std::string, tensor::Tensor> Pull(ParameterServer& ps);
// The rows of `ids` in `table` (checks the pull succeeds).
tensor::Tensor Rows(ParameterServer& ps, const std::string& table, const std::vector<int64_t>& ids);
// A float32 tensor start, start + step, ... in row-major order.
tensor::Tensor Ramp(const tensor::Shape& shape, float start, float step);

}  // namespace edl::roles::ps::testing
