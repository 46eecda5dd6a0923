#include "roles/ps/ps_checkpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ps_test_util.h"
#include "roles/local/compiled_model.h"
#include "roles/ps/merged_checkpoint.h"
#include "roles/ps/parameter_server.h"
#include "roles/ps/partition.h"

namespace edl::roles::ps {
namespace {
namespace fs = std::filesystem;

using protocol::PullDenseRequest;
using protocol::PushGradientsRequest;
using tensor::Tensor;
using testing::kAdam;
using testing::MakeModel;
using testing::MakePs;
using testing::ScratchDir;

using PsSet = std::vector<std::unique_ptr<ParameterServer>>;

PushGradientsRequest MakePush(int k) {
  PushGradientsRequest push;
  Tensor kernel = Tensor::Empty({3, 2});
  for (int64_t i = 0; i < 6; ++i) kernel.f32()[i] = 0.1f * k - 0.05f * i;
  push.dense.push_back({"dense/kernel", kernel});
  push.dense.push_back({"hidden/bias", Tensor::FromVector({3}, {0.3f, -0.2f * k, 1})});
  push.sparse.push_back(
      {"emb/embeddings", Tensor::FromInts({3}, {1, 6, 6 + k}), Tensor::Full({3, 4}, 0.25f * k)});
  return push;
}

// `full` split by owner, as PsClient does.
std::vector<PushGradientsRequest> Route(const PushGradientsRequest& full, int n, int64_t version) {
  std::vector<PushGradientsRequest> out(n);
  for (auto& r : out) r.version = version;
  for (const auto& d : full.dense) out[PsOfParameter(d.name, n)].dense.push_back(d);
  for (const auto& s : full.sparse) {
    for (int64_t i = 0; i < s.ids.numel(); ++i) {
      const int64_t id = s.ids.i64()[i];
      out[PsOfId(id, n)].sparse.push_back(
          {s.table, Tensor::FromInts({1}, {id}), s.values.Slice(i, i + 1).Clone()});
    }
  }
  return out;
}

void PushAll(PsSet& set, const PushGradientsRequest& full) {
  const int n = static_cast<int>(set.size());
  auto parts = Route(full, n, set[0]->version());
  for (int i = 0; i < n; ++i) ASSERT_TRUE(set[i]->PushGradients(parts[i]).ok());
}

// Every dense parameter and every table row (0..49) of a PS set.
std::map<std::string, std::vector<float>> State(PsSet& set) {
  std::map<std::string, std::vector<float>> out;
  const int n = static_cast<int>(set.size());
  for (auto& ps : set) {
    auto pulled = ps->PullDense(PullDenseRequest{});
    EDL_CHECK(pulled.ok());
    for (auto& t : pulled->params) out[t.name] = t.value.ToVector();
  }
  for (int64_t id = 0; id < 50; ++id) {
    auto rows = set[PsOfId(id, n)]->PullRows({"emb/embeddings", Tensor::FromInts({1}, {id})});
    EDL_CHECK(rows.ok()) << rows.status().message();
    out["row " + std::to_string(id)] = rows->values.ToVector();
  }
  return out;
}

PsSet MakeSet(int n, ParameterServerOptions options) {
  PsSet set;
  for (int i = 0; i < n; ++i) {
    options.ps_index = i;
    options.num_ps = n;
    set.push_back(MakePs(options, kAdam));
  }
  return set;
}

TEST(PsCheckpoint, RestoresAPsThatThenContinuesExactlyAsIfNeverStopped) {
  ScratchDir dir;
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path();
  options.checkpoint_steps = 2;
  PsSet original = MakeSet(1, options);
  PushAll(original, MakePush(1));
  PushAll(original, MakePush(2));
  ASSERT_TRUE(fs::exists(PartitionPath(dir.path(), 2, 0, 1) + "/manifest.json"));
  EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{2}));

  // Relaunched with the same identity and checkpoint_dir.
  PsSet relaunched = MakeSet(1, options);
  EXPECT_EQ(relaunched[0]->version(), 2);
  for (int k = 3; k <= 4; ++k) {
    PushAll(original, MakePush(k));
    PushAll(relaunched, MakePush(k));
  }
  EXPECT_EQ(State(relaunched), State(original));
  EXPECT_EQ(relaunched[0]->version(), 4);
}

TEST(PsCheckpoint, ARestoredPsKnowsTheNamedPushesItsWeightsHoldAndNoLater) {
  ScratchDir dir;
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path();
  options.checkpoint_steps = 2;
  PsSet original = MakeSet(1, options);
  auto push = [&](ParameterServer& ps, int64_t task, int64_t minibatch, int64_t settled = 0) {
    PushGradientsRequest r = Route(MakePush(1), 1, ps.version())[0];
    r.task_id = task;
    r.minibatch = minibatch;
    r.settled_task = settled;
    auto answer = ps.PushGradients(r);
    EDL_CHECK(answer.ok()) << answer.status().message();
    return *answer;
  };
  push(*original[0], 5, 0);
  push(*original[0], 6, 0, /*settled=*/5);  // version 2: checkpointed
  push(*original[0], 6, 1);                 // lost with the PS
  PsSet relaunched = MakeSet(1, options);
  ASSERT_EQ(relaunched[0]->version(), 2);
  ParameterServer& ps = *relaunched[0];
  // Task 5 was settled before the checkpoint; task 6 had one minibatch in it.
  EXPECT_EQ(ps.applied_pushes().Taken(5), AppliedPushes::kSettled);
  EXPECT_EQ(ps.applied_pushes().Taken(6), 1);
  EXPECT_TRUE(push(ps, 6, 0).duplicate);  // in the restored weights already
  const protocol::PushGradientsResponse beyond = push(ps, 6, 2);
  EXPECT_TRUE(beyond.behind);  // minibatch 1 is missing here
  EXPECT_EQ(beyond.task_taken, 1);
  EXPECT_EQ(ps.version(), 2);
  EXPECT_FALSE(push(ps, 6, 1).duplicate);  // applied again, here only
  EXPECT_EQ(ps.version(), 3);
}

// A failed periodic checkpoint is counted, with the last good version and
// the error, and retried a quarter interval later until one succeeds.
TEST(PsCheckpoint, AFailedCheckpointIsRetriedAndItsHealthSaysSo) {
  ScratchDir dir;
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path() + "/ckpt";
  options.checkpoint_steps = 4;  // retries one version after a failure
  PsSet set = MakeSet(1, options);
  ParameterServer& ps = *set[0];
  for (int k = 1; k <= 4; ++k) PushAll(set, MakePush(k));
  EXPECT_EQ(ps.checkpoint_health().last_good_version, 4);
  EXPECT_EQ(ps.checkpoint_health().failures, 0);
  fs::remove_all(options.checkpoint_dir);
  { std::ofstream(options.checkpoint_dir) << "not a directory"; }
  for (int k = 5; k <= 8; ++k) PushAll(set, MakePush(k));
  ParameterServer::CheckpointHealth h = ps.checkpoint_health();
  EXPECT_EQ(h.last_good_version, 4);
  EXPECT_EQ(h.failures, 1);
  EXPECT_EQ(h.failed_version, 8);
  EXPECT_NE(h.last_error.find(options.checkpoint_dir), std::string::npos) << h.last_error;
  PushAll(set, MakePush(9));  // the retry
  EXPECT_EQ(ps.checkpoint_health().failures, 2);
  EXPECT_EQ(ps.checkpoint_health().failed_version, 9);
  fs::remove(options.checkpoint_dir);
  PushAll(set, MakePush(10));  // the next retry finds the directory back
  h = ps.checkpoint_health();
  EXPECT_EQ(h.failures, 0);
  EXPECT_EQ(h.last_good_version, 10);
  EXPECT_EQ(ListCompleteVersions(options.checkpoint_dir), (std::vector<int64_t>{10}));
}

TEST(PsCheckpoint, AnotherJobsCheckpointBringsNoNamedPushes) {
  ScratchDir dir;
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path();
  options.checkpoint_steps = 1;
  PsSet original = MakeSet(1, options);
  PushGradientsRequest r = Route(MakePush(1), 1, 0)[0];
  r.task_id = 5;
  ASSERT_TRUE(original[0]->PushGradients(r).ok());
  ScratchDir other;
  ParameterServerOptions from;
  from.checkpoint_dir = other.path();
  from.checkpoint_dir_for_init = dir.path();
  PsSet started = MakeSet(1, from);
  ASSERT_EQ(started[0]->version(), 1);
  EXPECT_EQ(started[0]->applied_pushes().Taken(5), 0);
}

TEST(PsCheckpoint, ACheckpointOfTwoPsRestoresIntoThreeOrOneWithTheSameValues) {
  ScratchDir dir;
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path();
  PsSet two = MakeSet(2, options);
  for (int k = 1; k <= 3; ++k) PushAll(two, MakePush(k));
  for (auto& ps : two) ASSERT_TRUE(ps->SaveCheckpoint().ok());
  EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{3}));

  ParameterServerOptions init;
  init.checkpoint_dir_for_init = dir.path();
  PsSet three = MakeSet(3, init);
  PsSet one = MakeSet(1, init);
  for (auto& ps : three) EXPECT_EQ(ps->version(), 3);
  const auto want = State(two);
  EXPECT_EQ(State(three), want);
  EXPECT_EQ(State(one), want);
  // The optimizer slots moved too: one more Adam step agrees everywhere.
  PushAll(two, MakePush(4));
  PushAll(three, MakePush(4));
  PushAll(one, MakePush(4));
  const auto after = State(two);
  EXPECT_NE(after, want);
  EXPECT_EQ(State(three), after);
  EXPECT_EQ(State(one), after);
}

TEST(PsCheckpoint, MergesIntoAWholeModelCheckpointWithEveryTableRow) {
  ScratchDir dir;
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path();
  PsSet two = MakeSet(2, options);
  for (int k = 1; k <= 2; ++k) PushAll(two, MakePush(k));
  for (auto& ps : two) ASSERT_TRUE(ps->SaveCheckpoint().ok());
  CompiledModel local = MakeModel(kAdam);
  auto merged = ReadMergedCheckpoint(dir.path(), *local.model, options.seed);
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ(merged->version, 2);
  ASSERT_TRUE(RestoreCheckpoint(*merged, local, /*with_optimizer_state=*/true).ok());
  const auto want = State(two);  // creates the untouched rows on the PS
  for (nn::Parameter* p : local.model->parameters()) {
    if (p->name != "emb/embeddings") {
      EXPECT_EQ(p->value.ToVector(), want.at(p->name)) << p->name;
      continue;
    }
    for (int64_t id = 0; id < 50; ++id) {
      std::vector<float> row(p->value.f32() + id * 4, p->value.f32() + id * 4 + 4);
      EXPECT_EQ(row, want.at("row " + std::to_string(id))) << id;
    }
  }
}

TEST(PsCheckpoint, KeepsTheNewestCompleteVersionsAndNeverTheJustWrittenOne) {
  {
    ScratchDir dir;
    ParameterServerOptions options;
    options.checkpoint_dir = dir.path();
    options.checkpoint_steps = 1;
    options.keep_checkpoint_max = 2;
    PsSet set = MakeSet(1, options);
    for (int k = 1; k <= 5; ++k) PushAll(set, MakePush(k));
    EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{4, 5}));
  }
  {
    ScratchDir dir;
    ParameterServerOptions options;
    options.checkpoint_dir = dir.path();
    options.checkpoint_steps = 1;
    options.keep_checkpoint_max = 0;  // keep all
    PsSet set = MakeSet(1, options);
    for (int k = 1; k <= 3; ++k) PushAll(set, MakePush(k));
    EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{1, 2, 3}));
  }
  {
    // keep 1 with two PS, PS 1 lagging: nothing is deleted until a newer
    // version is complete; versions PS 0 alone wrote stay.
    ScratchDir dir;
    ParameterServerOptions options;
    options.checkpoint_dir = dir.path();
    options.checkpoint_steps = 1;
    options.keep_checkpoint_max = 1;
    PsSet set = MakeSet(2, options);
    for (int k = 1; k <= 3; ++k) {
      ASSERT_TRUE(set[0]->PushGradients(Route(MakePush(k), 2, k - 1)[0]).ok());
    }
    EXPECT_TRUE(ListCompleteVersions(dir.path()).empty());
    ASSERT_TRUE(set[1]->PushGradients(Route(MakePush(1), 2, 0)[1]).ok());
    EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{1}));
    ASSERT_TRUE(set[1]->PushGradients(Route(MakePush(2), 2, 1)[1]).ok());
    EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{2}));
    EXPECT_TRUE(fs::exists(PartitionPath(dir.path(), 3, 0, 2)));
    EXPECT_FALSE(fs::exists(PartitionPath(dir.path(), 1, 1, 2)));
  }
}

TEST(PsCheckpoint, ACorruptPartitionFailsTheRestoreNamingTheFile) {
  ScratchDir dir;
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path();
  PsSet set = MakeSet(1, options);
  PushAll(set, MakePush(1));
  ASSERT_TRUE(set[0]->SaveCheckpoint().ok());
  const std::string data = PartitionPath(dir.path(), 1, 0, 1) + "/tensors.bin";
  fs::resize_file(data, fs::file_size(data) - 8);
  auto ps = ParameterServer::Create(options, MakeModel(kAdam));
  ASSERT_FALSE(ps.ok());
  EXPECT_NE(ps.status().message().find("tensors.bin"), std::string::npos) << ps.status().message();
}

TEST(PsCheckpoint, ACheckpointOfAnotherModelIsRejectedNamingTheWeight) {
  ScratchDir dir;
  Checkpoint c;
  c.version = 4;
  c.model.push_back({"dense/kernel", Tensor::Zeros({5, 5})});
  ASSERT_TRUE(WritePartition(dir.path(), 0, 1, c).ok());
  ParameterServerOptions options;
  options.checkpoint_dir = dir.path();
  auto ps = ParameterServer::Create(options, MakeModel(kAdam));
  ASSERT_FALSE(ps.ok());
  EXPECT_NE(ps.status().message().find("\"dense/kernel\" has shape [5, 5]"), std::string::npos)
      << ps.status().message();
}

TEST(PsCheckpoint, AVersionMissingAPartitionIsNotComplete) {
  ScratchDir dir;
  Checkpoint c;
  c.version = 7;
  ASSERT_TRUE(WritePartition(dir.path(), 1, 2, c).ok());
  EXPECT_TRUE(ListCompleteVersions(dir.path()).empty());
  EXPECT_FALSE(ReadPartitions(dir.path(), 7).ok());
  ASSERT_TRUE(WritePartition(dir.path(), 0, 2, c).ok());
  EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{7}));
  auto parts = ReadPartitions(dir.path(), 7);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->size(), 2u);
}

// The version directories under `root`, ascending.
std::vector<std::string> VersionDirNames(const std::string& root) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// Two PS writing each version in either order, each pruning right after its
// write, as a job's PS do. The old rule (PS 1 deleted only its own
// partitions) left "version-2" holding PS 0's partition alone.
TEST(PsCheckpoint, PruningLeavesNoPartialVersionOlderThanTheNewestCompleteOne) {
  ScratchDir dir;
  for (int64_t v = 1; v <= 4; ++v) {
    const std::vector<int> order = v % 2 == 0 ? std::vector<int>{0, 1} : std::vector<int>{1, 0};
    for (int index : order) {
      Checkpoint c;
      c.version = v;
      ASSERT_TRUE(WritePartition(dir.path(), index, 2, c).ok());
      ASSERT_TRUE(PrunePartitions(dir.path(), /*keep_max=*/2, v).ok());
    }
  }
  EXPECT_EQ(VersionDirNames(dir.path()), (std::vector<std::string>{"version-3", "version-4"}));
  EXPECT_EQ(ListCompleteVersions(dir.path()), (std::vector<int64_t>{3, 4}));
}

TEST(PsCheckpoint, APartialVersionIsKeptWhileNewestAndDeletedOnceANewerOneCompletes) {
  ScratchDir dir;
  Checkpoint c;
  c.version = 5;
  ASSERT_TRUE(WritePartition(dir.path(), 0, 2, c).ok());
  ASSERT_TRUE(WritePartition(dir.path(), 1, 2, c).ok());
  c.version = 6;  // PS 1 died before writing version 6
  ASSERT_TRUE(WritePartition(dir.path(), 0, 2, c).ok());
  ASSERT_TRUE(PrunePartitions(dir.path(), 1, 6).ok());
  EXPECT_EQ(VersionDirNames(dir.path()), (std::vector<std::string>{"version-5", "version-6"}));
  c.version = 7;
  ASSERT_TRUE(WritePartition(dir.path(), 0, 2, c).ok());
  ASSERT_TRUE(WritePartition(dir.path(), 1, 2, c).ok());
  ASSERT_TRUE(PrunePartitions(dir.path(), 1, 7).ok());
  EXPECT_EQ(VersionDirNames(dir.path()), (std::vector<std::string>{"version-7"}));
}

}  // namespace
}  // namespace edl::roles::ps
