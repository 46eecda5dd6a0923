// MasterCore's allreduce ring (docs/allreduce.md): JoinRing / GetRingView /
// RingSynced in process, and through ServeMaster / RemoteMaster over real
// loopback sockets.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "net/rpc.h"
#include "roles/master/master_core.h"
#include "roles/protocol/remote_services.h"

namespace edl::roles::master {
namespace {

using protocol::JoinRingRequest;
using protocol::RingViewRequest;

MasterOptions Options() {
  MasterOptions o;
  o.job_name = "ring";
  o.records.training = 6400;
  o.minibatch_size = 16;
  o.num_minibatches_per_task = 4;
  o.num_epochs = 1;
  o.evaluation_steps = -1;
  o.heartbeat_timeout_s = 2;
  o.seed = 1;
  return o;
}

std::unique_ptr<MasterCore> Make(const Clock& clock) {
  auto core = MasterCore::Create(Options(), clock);
  EXPECT_TRUE(core.ok()) << core.status().message();
  return std::move(core).value();
}

int64_t Register(protocol::MasterService& master, const std::string& name) {
  auto r = master.RegisterWorker({.name = name, .pid = 1});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->worker_id : -1;
}

std::vector<std::string> Names(const protocol::RingView& v) {
  std::vector<std::string> out;
  for (const protocol::RingMember& m : v.members) out.push_back(m.name);
  return out;
}

protocol::RingView ViewOf(protocol::MasterService& master, int64_t id) {
  auto v = master.GetRingView({.worker_id = id, .known_version = 0});
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? *v : protocol::RingView{};
}

TEST(MasterRing, RanksFollowJoinOrder) {
  FakeClock clock;
  auto core = Make(clock);
  const int64_t a = Register(*core, "worker-0");
  const int64_t b = Register(*core, "worker-1");
  const int64_t c = Register(*core, "worker-2");
  ASSERT_TRUE(core->JoinRing({.worker_id = c, .address = "h2:1"}).ok());
  ASSERT_TRUE(core->JoinRing({.worker_id = a, .address = "h0:1"}).ok());
  auto joined = core->JoinRing({.worker_id = b, .address = "h1:1"});
  ASSERT_TRUE(joined.ok()) << joined.status().message();

  EXPECT_EQ(Names(*joined), (std::vector<std::string>{"worker-2", "worker-0", "worker-1"}));
  EXPECT_EQ(joined->members[0].worker_id, c);
  EXPECT_EQ(joined->members[1].address, "h0:1");
  EXPECT_EQ(joined->version, 3u);
  const protocol::RingView polled = ViewOf(*core, a);
  EXPECT_EQ(polled.version, joined->version);
  EXPECT_EQ(Names(polled), Names(*joined));
}

TEST(MasterRing, RefusesAJoinFromAnUnknownOrDeadWorker) {
  FakeClock clock;
  auto core = Make(clock);
  auto unknown = core->JoinRing({.worker_id = 42, .address = "h:1"});
  EXPECT_EQ(unknown.status().code(), StatusCode::kFailedPrecondition);

  const int64_t a = Register(*core, "worker-0");
  core->OnWorkerExit("worker-0");
  auto dead = core->JoinRing({.worker_id = a, .address = "h:1"});
  EXPECT_EQ(dead.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ViewOf(*core, a).members.size(), 0u);

  const int64_t b = Register(*core, "worker-1");
  EXPECT_EQ(core->JoinRing({.worker_id = b, .address = ""}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(core->GetRingView({.worker_id = 99}).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(core->RingSynced({.worker_id = 99, .version = 1}).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(MasterRing, AWorkerThatMissesHeartbeatsLeavesTheRingAndTheVersionBumps) {
  FakeClock clock;
  auto core = Make(clock);
  const int64_t a = Register(*core, "worker-0");
  const int64_t b = Register(*core, "worker-1");
  const int64_t c = Register(*core, "worker-2");
  for (int64_t id : {a, b, c}) {
    ASSERT_TRUE(core->JoinRing({.worker_id = id, .address = "h:" + std::to_string(id)}).ok());
  }
  const uint64_t before = ViewOf(*core, a).version;

  // worker-1 falls silent; the others keep beating.
  for (int i = 0; i < 30; ++i) {
    clock.AdvanceSeconds(0.1);
    ASSERT_TRUE(core->Heartbeat({.worker_id = a}).ok());
    ASSERT_TRUE(core->Heartbeat({.worker_id = c}).ok());
    core->Tick();
  }
  const protocol::RingView after = ViewOf(*core, a);
  EXPECT_GT(after.version, before);
  EXPECT_EQ(Names(after), (std::vector<std::string>{"worker-0", "worker-2"}));
  EXPECT_EQ(core->JoinRing({.worker_id = b, .address = "h:9"}).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(MasterRing, NoTaskIsHandedOutUntilTheRingHasItsStartingSize) {
  FakeClock clock;
  MasterOptions o = Options();
  o.ring_start_members = 2;
  o.ring_start_timeout_s = 60;
  auto core = MasterCore::Create(o, clock);
  ASSERT_TRUE(core.ok());
  const int64_t a = Register(**core, "worker-0");
  const int64_t b = Register(**core, "worker-1");
  ASSERT_TRUE((*core)->JoinRing({.worker_id = a, .address = "h:1"}).ok());
  auto t = (*core)->GetTask({.worker_id = a});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->type, protocol::TaskType::kWait);
  ASSERT_TRUE((*core)->JoinRing({.worker_id = b, .address = "h:2"}).ok());
  t = (*core)->GetTask({.worker_id = a});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->type, protocol::TaskType::kTraining);
  // Started once: a ring that shrinks later goes on.
  ASSERT_TRUE((*core)->RequestStop("worker-1"));
  t = (*core)->GetTask({.worker_id = a});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->type, protocol::TaskType::kTraining);
}

TEST(MasterRing, TheRingStartsSmallerWhenTheWaitTimesOut) {
  FakeClock clock;
  MasterOptions o = Options();
  o.ring_start_members = 3;
  o.ring_start_timeout_s = 10;
  auto core = MasterCore::Create(o, clock);
  ASSERT_TRUE(core.ok());
  const int64_t a = Register(**core, "worker-0");
  ASSERT_TRUE((*core)->JoinRing({.worker_id = a, .address = "h:1"}).ok());
  for (int i = 0; i < 9; ++i) {
    clock.AdvanceSeconds(1);
    ASSERT_TRUE((*core)->Heartbeat({.worker_id = a}).ok());
    EXPECT_EQ((*core)->GetTask({.worker_id = a})->type, protocol::TaskType::kWait) << i;
  }
  clock.AdvanceSeconds(1.5);
  EXPECT_EQ((*core)->GetTask({.worker_id = a})->type, protocol::TaskType::kTraining);
}

TEST(MasterRing, RingMembersOfAFinishedJobAreNotStoppedButToldDone) {
  FakeClock clock;
  MasterOptions o = Options();
  o.records.training = 64;  // one task
  auto core = MasterCore::Create(o, clock);
  ASSERT_TRUE(core.ok());
  const int64_t a = Register(**core, "worker-0");
  const int64_t b = Register(**core, "worker-1");  // not in the ring
  ASSERT_TRUE((*core)->JoinRing({.worker_id = a, .address = "h:1"}).ok());
  auto t = (*core)->GetTask({.worker_id = a});
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->type, protocol::TaskType::kTraining);
  protocol::ReportTaskRequest report;
  report.worker_id = a;
  report.task_id = t->id;
  report.samples = 64;
  ASSERT_TRUE((*core)->ReportTask(report).ok());
  ASSERT_EQ((*core)->state(), JobState::kSucceeded);
  // The member finishes with the ring (it learns kDone from GetTask); a
  // worker outside the ring is stopped as before.
  EXPECT_FALSE((*core)->Heartbeat({.worker_id = a})->stop);
  EXPECT_TRUE((*core)->Heartbeat({.worker_id = b})->stop);
  EXPECT_EQ((*core)->GetTask({.worker_id = a})->type, protocol::TaskType::kDone);
}

TEST(MasterRing, AWorkerAskedToLeaveOrThatExitedLeavesTheRing) {
  FakeClock clock;
  auto core = Make(clock);
  const int64_t a = Register(*core, "worker-0");
  const int64_t b = Register(*core, "worker-1");
  const int64_t c = Register(*core, "worker-2");
  for (int64_t id : {a, b, c}) {
    ASSERT_TRUE(core->JoinRing({.worker_id = id, .address = "h:" + std::to_string(id)}).ok());
  }
  ASSERT_TRUE(core->RequestStop("worker-1"));
  EXPECT_EQ(Names(ViewOf(*core, a)), (std::vector<std::string>{"worker-0", "worker-2"}));
  EXPECT_EQ(core->JoinRing({.worker_id = b, .address = "h:9"}).status().code(),
            StatusCode::kFailedPrecondition);

  const uint64_t before = ViewOf(*core, a).version;
  core->OnWorkerExit("worker-2");
  const protocol::RingView after = ViewOf(*core, a);
  EXPECT_EQ(after.version, before + 1);
  EXPECT_EQ(Names(after), (std::vector<std::string>{"worker-0"}));
}

TEST(MasterRing, ARelaunchedWorkerRejoinsAtTheEndUnderItsNewId) {
  FakeClock clock;
  auto core = Make(clock);
  const int64_t a = Register(*core, "worker-0");
  const int64_t b = Register(*core, "worker-1");
  ASSERT_TRUE(core->JoinRing({.worker_id = a, .address = "h0:1"}).ok());
  ASSERT_TRUE(core->JoinRing({.worker_id = b, .address = "h1:1"}).ok());

  // worker-0's process is replaced: the old incarnation leaves the ring.
  const int64_t a2 = Register(*core, "worker-0");
  ASSERT_NE(a2, a);
  EXPECT_EQ(Names(ViewOf(*core, b)), (std::vector<std::string>{"worker-1"}));

  auto rejoined = core->JoinRing({.worker_id = a2, .address = "h0:2"});
  ASSERT_TRUE(rejoined.ok()) << rejoined.status().message();
  EXPECT_EQ(Names(*rejoined), (std::vector<std::string>{"worker-1", "worker-0"}));
  EXPECT_EQ(rejoined->members[1].worker_id, a2);
  EXPECT_EQ(rejoined->members[1].address, "h0:2");
  // The newcomer takes the state of the longest-standing member.
  EXPECT_EQ(rejoined->source_rank, 0);
}

TEST(MasterRing, RingSyncedClearsTheSource) {
  FakeClock clock;
  auto core = Make(clock);
  const int64_t a = Register(*core, "worker-0");
  const int64_t b = Register(*core, "worker-1");
  ASSERT_TRUE(core->JoinRing({.worker_id = a, .address = "h0:1"}).ok());
  ASSERT_TRUE(core->JoinRing({.worker_id = b, .address = "h1:1"}).ok());
  const protocol::RingView fresh = ViewOf(*core, a);
  ASSERT_EQ(fresh.source_rank, 0);

  ASSERT_TRUE(core->RingSynced({.worker_id = b, .version = fresh.version}).ok());
  const protocol::RingView synced = ViewOf(*core, b);
  EXPECT_EQ(synced.source_rank, -1);
  EXPECT_EQ(synced.members.size(), 2u);
}

TEST(MasterRing, StatusShowsTheRingOnlyOnceSomeoneJoined) {
  FakeClock clock;
  auto core = Make(clock);
  const int64_t a = Register(*core, "worker-0");
  EXPECT_FALSE(nlohmann::json::parse(core->StatusJson()).contains("ring"));

  ASSERT_TRUE(core->JoinRing({.worker_id = a, .address = "h0:1"}).ok());
  const nlohmann::json ring = nlohmann::json::parse(core->StatusJson()).at("ring");
  EXPECT_EQ(ring.at("version"), 1);
  EXPECT_EQ(ring.at("size"), 1);
  EXPECT_EQ(ring.at("members").at(0).at("name"), "worker-0");
  EXPECT_EQ(ring.at("members").at(0).at("address"), "h0:1");
  EXPECT_EQ(ring.at("members").at(0).at("id"), a);
}

TEST(MasterRing, ThreeRemoteWorkersJoinAndReadTheSameView) {
  FakeClock clock;
  auto core = Make(clock);
  net::ServerOptions options;
  options.secret = "ring-secret";
  net::RpcServer server(options);
  protocol::ServeMaster(*core, server);
  ASSERT_TRUE(server.Start().ok());

  constexpr int kWorkers = 3;
  std::vector<protocol::RingView> views(kWorkers);
  std::vector<Status> errors(kWorkers);
  std::vector<int64_t> ids(kWorkers);
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kWorkers; ++i) {
      threads.emplace_back([&, i] {
        protocol::RemoteMaster master("127.0.0.1", server.port(), "ring-secret", net::Millis(5000));
        auto reg = master.RegisterWorker({.name = "worker-" + std::to_string(i), .pid = i});
        if (!reg.ok()) {
          errors[i] = reg.status();
          return;
        }
        ids[i] = reg->worker_id;
        auto joined = master.JoinRing(
            {.worker_id = reg->worker_id, .address = "127.0.0.1:" + std::to_string(7000 + i)});
        if (!joined.ok()) errors[i] = joined.status();
      });
    }
    for (std::thread& t : threads) t.join();
  }
  for (const Status& s : errors) ASSERT_TRUE(s.ok()) << s.message();

  // Every worker polls after all joined: the same full view.
  for (int i = 0; i < kWorkers; ++i) {
    protocol::RemoteMaster master("127.0.0.1", server.port(), "ring-secret", net::Millis(5000));
    auto v = master.GetRingView({.worker_id = ids[i], .known_version = 3});
    ASSERT_TRUE(v.ok()) << v.status().message();
    views[i] = *v;
  }
  for (int i = 0; i < kWorkers; ++i) {
    EXPECT_EQ(views[i].version, 3u);
    ASSERT_EQ(views[i].members.size(), 3u);
    EXPECT_EQ(views[i].source_rank, views[0].source_rank);
    for (int r = 0; r < kWorkers; ++r) {
      EXPECT_EQ(views[i].members[r].name, views[0].members[r].name);
      EXPECT_EQ(views[i].members[r].worker_id, views[0].members[r].worker_id);
      EXPECT_EQ(views[i].members[r].address, views[0].members[r].address);
    }
  }
  std::vector<std::string> names = Names(views[0]);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"worker-0", "worker-1", "worker-2"}));

  protocol::RemoteMaster master("127.0.0.1", server.port(), "ring-secret", net::Millis(5000));
  ASSERT_TRUE(master.RingSynced({.worker_id = ids[0], .version = 3}).ok());
  auto synced = master.GetRingView({.worker_id = ids[1], .known_version = 3});
  ASSERT_TRUE(synced.ok()) << synced.status().message();
  EXPECT_EQ(synced->source_rank, -1);
  auto refused = master.JoinRing({.worker_id = 77, .address = "h:1"});
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  server.Stop();
}

}  // namespace
}  // namespace edl::roles::master
