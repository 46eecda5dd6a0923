// --get_model_steps: a PS worker pulls the dense parameters before every
// N-th training step only, and still trains every record once.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "base/clock.h"
#include "roles/local/model_source.h"
#include "roles/master/master_core.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/ps_client.h"
#include "roles/worker/worker.h"
#include "tests/roles/worker/mlp_job.h"

namespace edl::roles::worker {
namespace {

using testing::kTrain;
using testing::Mlp;

// Passes every call to a real PS, counting the dense pulls.
class CountingPs : public protocol::PsService {
 public:
  explicit CountingPs(protocol::PsService& ps) : ps_(ps) {}
  Result<protocol::PullDenseResponse> PullDense(const protocol::PullDenseRequest& r) override {
    ++dense_pulls;
    return ps_.PullDense(r);
  }
  Result<protocol::PullRowsResponse> PullRows(const protocol::PullRowsRequest& r) override {
    return ps_.PullRows(r);
  }
  Result<protocol::PushGradientsResponse> PushGradients(
      const protocol::PushGradientsRequest& r) override {
    ++pushes;
    if (r.pull_dense) ++pushes_with_pull;
    return ps_.PushGradients(r);
  }
  std::atomic<int> dense_pulls{0};
  std::atomic<int> pushes{0};
  std::atomic<int> pushes_with_pull{0};  // each answered with the next step's pull

 private:
  protocol::PsService& ps_;
};

struct Counts {
  int dense_pulls = 0;  // PullDense calls and pulls carried by pushes
  int pushes_with_pull = 0;
  int pushes = 0;
  std::string ledger;
};

// One worker trains 640 records (20 steps of 32) against one in-process PS.
Counts TrainWithGetModelSteps(int get_model_steps) {
  auto core = testing::OneEpochMaster("pulls", 640, /*shuffle=*/false);
  auto ps = ps::ParameterServer::Create({}, Mlp(/*for_ps=*/true));
  EDL_CHECK(ps.ok()) << ps.status().message();
  CountingPs counting(**ps);
  ps::PsClient client({&counting});
  CompiledModel cm = Mlp(/*for_ps=*/false);
  auto source = OpenSourceForModel("--training_data", kTrain, cm, true);
  EDL_CHECK(source.ok()) << source.status().message();
  WorkerOptions wo;
  wo.minibatch_size = 32;
  wo.get_model_steps = get_model_steps;
  wo.shuffle = false;
  wo.wait_interval = std::chrono::milliseconds(10);
  Worker w(wo, cm, WorkerData{source->get(), nullptr, nullptr}, *core, client, SystemClock());
  Status s = w.Run();
  EDL_CHECK(s.ok()) << s.message();
  return {counting.dense_pulls.load() + counting.pushes_with_pull.load(),
          counting.pushes_with_pull.load(), counting.pushes.load(), core->FinalReport()};
}

TEST(GetModelSteps, AWorkerPullsTheDenseModelEveryNthStepOnly) {
  const Counts every = TrainWithGetModelSteps(1);
  const Counts fourth = TrainWithGetModelSteps(4);
  EXPECT_EQ(every.pushes, 20);
  EXPECT_EQ(fourth.pushes, 20);
  EXPECT_EQ(every.dense_pulls, 20);
  EXPECT_EQ(fourth.dense_pulls, 5);  // before steps 0, 4, 8, 12 and 16
  // Inside each 4-step task the pull rides on the previous step's push;
  // a task's first step pulls by itself (and a task's last push asks for
  // nothing).
  EXPECT_EQ(every.pushes_with_pull, 15);
  EXPECT_EQ(fourth.pushes_with_pull, 0);
  for (const Counts* r : {&every, &fourth}) {
    EXPECT_NE(r->ledger.find("epoch 1: 640/640 records trained, 0 missing, 0 trained twice"),
              std::string::npos)
        << r->ledger;
  }
}

}  // namespace
}  // namespace edl::roles::worker
