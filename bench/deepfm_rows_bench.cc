// edl_deepfm_rows_bench: how many embedding rows per second one worker moves
// through the parameter servers for a DeepFM whose tables have --rows rows
// (10 million by default), on 2 PS over real loopback RPC. Per step the
// worker pulls the rows of a minibatch of --batch records x 26 categorical
// ids (skewed: a quarter of the ids from the first 0.1% of rows, the rest
// uniform) into its table caches, then pushes one gradient row per id (the
// repeats summed), exactly as a training step does, without the model's
// arithmetic. Prints unique rows pulled and pushed per second.
//
// The model is read from --model_def (scripts/bench/deepfm_rows_bench.sh
// writes zoo:criteo_deepfm with the tables widened). --named=1 names each
// push (task, minibatch) as a worker's training step does.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/check.h"
#include "net/rpc.h"
#include "roles/local/compiled_model.h"
#include "roles/protocol/remote_services.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/ps_client.h"
#include "tensor/ops.h"

namespace {

using edl::tensor::Tensor;
using Clock = std::chrono::steady_clock;

int64_t Arg(int argc, char** argv, const char* name, int64_t value) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      return std::atoll(argv[i] + prefix.size());
    }
  }
  return value;
}

std::string StrArg(int argc, char** argv, const char* name) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return argv[i] + prefix.size();
  }
  return "";
}

edl::roles::CompiledModel Compile(const std::string& path) {
  edl::roles::ModelOptions options;
  options.model_def = path;
  options.seed = 1;
  auto cm = edl::roles::CompileModel(options);
  EDL_CHECK(cm.ok()) << cm.status().message();
  return std::move(cm).value();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model_def = StrArg(argc, argv, "model_def");
  const int64_t batch = Arg(argc, argv, "batch", 512);
  const int64_t steps = Arg(argc, argv, "steps", 40);
  const bool named = Arg(argc, argv, "named", 0) != 0;
  const int64_t fields = 26;
  if (model_def.empty()) {
    std::printf(
        "usage: edl_deepfm_rows_bench --model_def=deepfm.json [--batch=512] [--steps=40]\n");
    return 2;
  }
  const int num_ps = 2;
  std::vector<std::unique_ptr<edl::roles::ps::ParameterServer>> servers;
  std::vector<std::unique_ptr<edl::net::RpcServer>> rpc;
  std::vector<std::unique_ptr<edl::roles::protocol::RemotePs>> remotes;
  std::vector<edl::roles::protocol::PsService*> services;
  for (int i = 0; i < num_ps; ++i) {
    edl::roles::ps::ParameterServerOptions o;
    o.ps_index = i;
    o.num_ps = num_ps;
    auto ps = edl::roles::ps::ParameterServer::Create(o, Compile(model_def));
    EDL_CHECK(ps.ok()) << ps.status().message();
    servers.push_back(std::move(ps).value());
    edl::net::ServerOptions so;
    so.secret = "bench";
    rpc.push_back(std::make_unique<edl::net::RpcServer>(so));
    edl::roles::protocol::ServePs(*servers.back(), *rpc.back());
    EDL_CHECK(rpc.back()->Start().ok());
    remotes.push_back(std::make_unique<edl::roles::protocol::RemotePs>(
        "127.0.0.1", rpc.back()->port(), "bench", edl::net::Millis(600000)));
    services.push_back(remotes.back().get());
  }
  edl::roles::CompiledModel worker = Compile(model_def);
  edl::roles::ps::PsClient client(services);
  auto params = worker.model->parameters();
  std::vector<edl::nn::Parameter*> tables;
  for (const auto& e : worker.model->EmbeddingInputs()) {
    bool seen = false;
    for (auto* t : tables) seen = seen || t == e.table;
    if (!seen) tables.push_back(e.table);
  }
  EDL_CHECK(!tables.empty()) << "the model has no embedding table";
  const int64_t vocab = tables[0]->value.dim(0);
  std::printf("edl_deepfm_rows_bench: %zu tables of %lld rows (dims", tables.size(),
              (long long)vocab);
  for (auto* t : tables) std::printf(" %lld", (long long)t->value.dim(1));
  std::printf("), 2 PS over loopback RPC, batch %lld x %lld ids, %lld steps, %s pushes\n",
              (long long)batch, (long long)fields, (long long)steps, named ? "named" : "unnamed");

  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> uniform(0, vocab - 1);
  std::uniform_int_distribution<int64_t> hot(0, std::max<int64_t>(1, vocab / 1000) - 1);
  int64_t pulled = 0, pushed = 0;
  double seconds = 0;
  for (int64_t step = -2; step < steps; ++step) {  // 2 warm-up steps
    std::vector<int64_t> ids(batch * fields);
    for (int64_t& id : ids) id = rng() % 4 == 0 ? hot(rng) : uniform(rng);
    const Tensor id_tensor = Tensor::FromInts({batch, fields}, ids);
    std::vector<int64_t> unique = ids;
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    const auto t0 = Clock::now();
    for (auto* t : tables) {
      auto s = client.PullRows(*t, id_tensor);
      EDL_CHECK(s.ok()) << s.message();
    }
    for (auto* p : params) p->ZeroGrad();
    for (auto* t : tables) {
      t->sparse_grad = edl::tensor::SparseRows{
          Tensor::FromInts({batch * fields}, ids),
          Tensor::Full({batch * fields, t->value.dim(1)}, 1e-4f), t->value.dim(0)};
    }
    // --named=1: each push named as a training step's is (task of 8
    // minibatches, its index, the previous task settled), for the cost of
    // the PS's effectively-once bookkeeping (roles/ps/applied_pushes.h).
    edl::roles::ps::PushId id;
    if (named) {
      const int64_t task = 1000 + (step + 2) / 8;
      id = {task, (step + 2) % 8, (step + 2) % 8 == 0 ? task - 1 : 0};
    }
    client.StartPush(params, 0, false, id);
    auto r = client.FinishPush();
    EDL_CHECK(r.ok()) << r.status().message();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (step >= 0) {
      seconds += dt;
      pulled += static_cast<int64_t>(unique.size() * tables.size());
      pushed += static_cast<int64_t>(unique.size() * tables.size());
    }
  }
  std::printf("rows pulled: %lld in %.3f s of steps: %.3g rows/s\n", (long long)pulled, seconds,
              pulled / seconds);
  std::printf("rows pushed: %lld: %.3g rows/s (pull and push of each step timed together)\n",
              (long long)pushed, pushed / seconds);
  std::printf("steps/s: %.1f\n", steps / seconds);
  for (auto& s : rpc) s->Stop();
  return 0;
}
