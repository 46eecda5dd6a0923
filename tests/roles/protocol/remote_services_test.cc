// RemoteMaster / RemotePs against ServeMaster / ServePs over real loopback
// (net::RpcServer + net::RpcChannel), with in-test fake services.
#include "roles/protocol/remote_services.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "roles/protocol/codec.h"
#include "tests/roles/protocol/sample_messages.h"

namespace edl::roles::protocol {
namespace {

using namespace testing;  // NOLINT: the sample helpers
using tensor::DType;
using tensor::Tensor;

constexpr char kSecret[] = "job-secret-for-tests";
constexpr net::Millis kDeadline{5000};

class FakeMaster : public MasterService {
 public:
  Result<RegisterWorkerResponse> RegisterWorker(const RegisterWorkerRequest& r) override {
    ++calls;
    std::lock_guard<std::mutex> lock(mu);
    last_register = r;
    return RegisterWorkerResponse{.worker_id = r.pid + 1};
  }
  Result<HeartbeatResponse> Heartbeat(const HeartbeatRequest& r) override {
    ++calls;
    return HeartbeatResponse{.stop = r.worker_id == 8};
  }
  Result<Task> GetTask(const GetTaskRequest& r) override {
    ++calls;
    Task t = SampleTask();
    t.id = r.worker_id * 10;
    return t;
  }
  Result<ReportTaskResponse> ReportTask(const ReportTaskRequest& r) override {
    ++calls;
    if (r.task_id == 404) return FailedPrecondition("task 404 is not leased to worker 3");
    std::lock_guard<std::mutex> lock(mu);
    last_report = r;
    return ReportTaskResponse{};
  }

  std::atomic<int> calls{0};
  std::mutex mu;  // guards the last_* copies
  RegisterWorkerRequest last_register;
  ReportTaskRequest last_report;
};

class FakePs : public PsService {
 public:
  Result<PullDenseResponse> PullDense(const PullDenseRequest& r) override {
    ++calls;
    PullDenseResponse response = SamplePullDenseResponse();
    if (r.known_version == response.version) response.params.clear();
    return response;
  }
  // Row i is `dim` copies of ids[i].
  Result<PullRowsResponse> PullRows(const PullRowsRequest& r) override {
    ++calls;
    if (r.table != "embedding/embeddings") return NotFound("no table \"" + r.table + "\"");
    const int64_t n = r.ids.numel();
    Tensor values = Tensor::Empty({n, 4});
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 4; ++j) values.f32()[i * 4 + j] = static_cast<float>(r.ids.i64()[i]);
    }
    return PullRowsResponse{.values = values};
  }
  Result<PushGradientsResponse> PushGradients(const PushGradientsRequest& r) override {
    ++calls;
    std::lock_guard<std::mutex> lock(mu);
    last_push = r;
    PushGradientsResponse out;
    out.accepted = r.version >= 30;
    out.version = r.version + 1;
    return out;
  }

  std::atomic<int> calls{0};
  std::mutex mu;  // guards last_push
  PushGradientsRequest last_push;
};

// A server on an ephemeral loopback port serving both fakes.
class RemoteServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    net::ServerOptions options;
    options.secret = kSecret;
    server_ = std::make_unique<net::RpcServer>(options);
    ServeMaster(master_, *server_);
    ServePs(ps_, *server_);
    ASSERT_TRUE(server_->Start().ok());
  }
  int port() const { return server_->port(); }

  FakeMaster master_;
  FakePs ps_;
  std::unique_ptr<net::RpcServer> server_;
};

TEST_F(RemoteServicesTest, MasterCallsCarryEveryFieldBothWays) {
  RemoteMaster master("127.0.0.1", port(), kSecret, kDeadline);

  Result<RegisterWorkerResponse> registered = master.RegisterWorker(SampleRegisterWorkerRequest());
  ASSERT_TRUE(registered.ok()) << registered.status().message();
  EXPECT_EQ(registered->worker_id, SampleRegisterWorkerRequest().pid + 1);
  {
    std::lock_guard<std::mutex> lock(master_.mu);
    ExpectSame(master_.last_register, SampleRegisterWorkerRequest());
  }

  Result<HeartbeatResponse> beat = master.Heartbeat({.worker_id = 8});
  ASSERT_TRUE(beat.ok()) << beat.status().message();
  EXPECT_TRUE(beat->stop);

  Result<Task> task = master.GetTask({.worker_id = 3});
  ASSERT_TRUE(task.ok()) << task.status().message();
  Task expected = SampleTask();
  expected.id = 30;
  ExpectSame(*task, expected);

  Result<ReportTaskResponse> reported = master.ReportTask(SampleReportTaskRequest());
  ASSERT_TRUE(reported.ok()) << reported.status().message();
  std::lock_guard<std::mutex> lock(master_.mu);
  ExpectSame(master_.last_report, SampleReportTaskRequest());
}

TEST_F(RemoteServicesTest, AMasterWithoutARingAnswersTheRingCallsUnimplemented) {
  RemoteMaster master("127.0.0.1", port(), kSecret, kDeadline);
  Result<RingView> joined = master.JoinRing(SampleJoinRingRequest());
  EXPECT_EQ(joined.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(joined.status().message().find("JoinRing"), std::string::npos)
      << joined.status().message();
  EXPECT_EQ(master.GetRingView(SampleRingViewRequest()).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(master.RingSynced(SampleRingSyncedRequest()).status().code(),
            StatusCode::kUnimplemented);
}

TEST_F(RemoteServicesTest, PsCallsCarryTensorsBothWays) {
  RemotePs ps("127.0.0.1", port(), kSecret, kDeadline);

  Result<PullDenseResponse> dense = ps.PullDense({.known_version = -1});
  ASSERT_TRUE(dense.ok()) << dense.status().message();
  ExpectSame(*dense, SamplePullDenseResponse());
  Result<PullDenseResponse> unchanged = ps.PullDense({.known_version = 31});
  ASSERT_TRUE(unchanged.ok()) << unchanged.status().message();
  EXPECT_TRUE(unchanged->params.empty());

  Result<PullRowsResponse> rows =
      ps.PullRows({.table = "embedding/embeddings", .ids = Tensor::FromInts({2}, {7, 9})});
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(rows->values.ToVector(), (std::vector<float>{7, 7, 7, 7, 9, 9, 9, 9}));

  PushGradientsRequest push = SamplePushGradientsRequest();
  push.dense.push_back({"big", PatternTensor({512, 1024}, DType::kFloat32, 11)});  // 2 MiB
  Result<PushGradientsResponse> pushed = ps.PushGradients(push);
  ASSERT_TRUE(pushed.ok()) << pushed.status().message();
  EXPECT_TRUE(pushed->accepted);
  EXPECT_EQ(pushed->version, 31);
  std::lock_guard<std::mutex> lock(ps_.mu);
  ExpectSame(ps_.last_push, push);
}

TEST_F(RemoteServicesTest, AServiceErrorArrivesWithItsCodeAndMessage) {
  RemoteMaster master("127.0.0.1", port(), kSecret, kDeadline);
  ReportTaskRequest report = SampleReportTaskRequest();
  report.task_id = 404;
  Result<ReportTaskResponse> reported = master.ReportTask(report);
  ASSERT_FALSE(reported.ok());
  EXPECT_EQ(reported.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(reported.status().message(), "task 404 is not leased to worker 3");

  RemotePs ps("127.0.0.1", port(), kSecret, kDeadline);
  Result<PullRowsResponse> rows = ps.PullRows({.table = "nope", .ids = Tensor::FromInts({1}, {1})});
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(rows.status().message(), "no table \"nope\"");
}

TEST_F(RemoteServicesTest, AWrongSecretIsRefusedBeforeReachingTheService) {
  RemoteMaster master("127.0.0.1", port(), "not-the-secret", kDeadline);
  Result<Task> task = master.GetTask({.worker_id = 1});
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.status().code(), StatusCode::kUnauthenticated) << task.status().message();
  RemotePs ps("127.0.0.1", port(), "", kDeadline);
  Result<PullDenseResponse> dense = ps.PullDense({});
  ASSERT_FALSE(dense.ok());
  EXPECT_EQ(dense.status().code(), StatusCode::kUnauthenticated) << dense.status().message();
  EXPECT_EQ(master_.calls.load(), 0);
  EXPECT_EQ(ps_.calls.load(), 0);
}

TEST_F(RemoteServicesTest, AMalformedBodyIsInvalidArgumentAndTheServerKeepsServing) {
  net::RpcChannel channel("127.0.0.1", port(), kSecret);
  Result<std::string> garbage = channel.Call("/edl.Ps/PushGradients", "\x0d\x01garbage", kDeadline);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(garbage.status().message().rfind("PushGradientsRequest", 0), 0u)
      << garbage.status().message();

  Result<std::string> wrong_message =
      channel.Call("/edl.Master/GetTask", Encode(SampleHeartbeatRequest()), kDeadline);
  ASSERT_FALSE(wrong_message.ok());
  EXPECT_EQ(wrong_message.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong_message.status().message(),
            "GetTaskRequest: expected tag 6, got tag 4 (HeartbeatRequest)");

  Result<std::string> empty = channel.Call("/edl.Master/Heartbeat", "", kDeadline);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(master_.calls.load() + ps_.calls.load(), 0);

  // The same connection and a fresh client both still work.
  Result<std::string> ok =
      channel.Call("/edl.Master/Heartbeat", Encode(HeartbeatRequest{}), kDeadline);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  RemoteMaster master("127.0.0.1", port(), kSecret, kDeadline);
  Result<HeartbeatResponse> beat = master.Heartbeat({.worker_id = 1});
  ASSERT_TRUE(beat.ok()) << beat.status().message();
  EXPECT_FALSE(beat->stop);
}

TEST_F(RemoteServicesTest, AResponseThatDoesNotDecodeNamesThePathAndPeer) {
  net::ServerOptions options;
  options.secret = kSecret;
  net::RpcServer liar(options);
  liar.HandleRpc("/edl.Master/GetTask",
                 [](std::string_view) { return Result<std::string>(Encode(HeartbeatResponse{})); });
  ASSERT_TRUE(liar.Start().ok());
  RemoteMaster master("127.0.0.1", liar.port(), kSecret, kDeadline);
  Result<Task> task = master.GetTask({});
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(task.status().message(),
            "response to /edl.Master/GetTask from 127.0.0.1:" + std::to_string(liar.port()) +
                ": Task: expected tag 1, got tag 5 (HeartbeatResponse)");
}

TEST_F(RemoteServicesTest, AStoppedServerIsUnavailable) {
  RemotePs ps("127.0.0.1", port(), kSecret, kDeadline);
  ASSERT_TRUE(ps.PullDense({}).ok());
  server_->Stop();
  Result<PullDenseResponse> dense = ps.PullDense({});
  ASSERT_FALSE(dense.ok());
  EXPECT_EQ(dense.status().code(), StatusCode::kUnavailable) << dense.status().message();
}

TEST_F(RemoteServicesTest, ConcurrentCallsOnOneClientAllGetTheirOwnAnswers) {
  RemotePs ps("127.0.0.1", port(), kSecret, kDeadline);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const int64_t id = t * 1000 + i;
        Result<PullRowsResponse> rows =
            ps.PullRows({.table = "embedding/embeddings", .ids = Tensor::FromInts({1}, {id})});
        if (!rows.ok() ||
            rows->values.ToVector() != std::vector<float>(4, static_cast<float>(id))) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(ps_.calls.load(), 100);
}

}  // namespace
}  // namespace edl::roles::protocol
