#include "tests/roles/protocol/sample_messages.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "roles/protocol/codec.h"

namespace edl::roles::protocol::testing {

using tensor::DType;
using tensor::Tensor;

Tensor PatternTensor(tensor::Shape shape, DType dtype, int salt) {
  Tensor t = Tensor::Empty(std::move(shape), dtype);
  auto* p = static_cast<unsigned char*>(t.defined() && t.bytes() ? t.raw_data() : nullptr);
  for (size_t i = 0; i < t.bytes(); ++i) p[i] = static_cast<unsigned char>(i * 31 + salt);
  return t;
}

Task SampleTask() {
  Task t;
  t.id = 1234567890123;
  t.type = TaskType::kEvaluation;
  t.dataset = Dataset::kValidation;
  t.begin = -5;  // not meaningful, but the codec must carry any value
  t.end = int64_t{1} << 40;
  t.epoch = -7;
  t.model_version = 99;
  t.seed = std::numeric_limits<uint64_t>::max() - 3;
  return t;
}

RegisterWorkerRequest SampleRegisterWorkerRequest() {
  return {.name = std::string("worker-3\0\xff", 10), .pid = 4242, .num_threads = 3};
}
RegisterWorkerResponse SampleRegisterWorkerResponse() { return {.worker_id = -17}; }
HeartbeatRequest SampleHeartbeatRequest() { return {.worker_id = 8}; }
HeartbeatResponse SampleHeartbeatResponse() { return {.stop = true}; }
GetTaskRequest SampleGetTaskRequest() { return {.worker_id = 1LL << 50, .request = 77}; }

ReportTaskRequest SampleReportTaskRequest() {
  ReportTaskRequest r;
  r.worker_id = 3;
  r.task_id = 77;
  r.ok = false;
  r.error = "records [100, 200) of train.csv: line 150: bad float \"x\"";
  r.model_version = 12;
  r.loss_sum = -0.125e-300;
  r.samples = 100;
  r.records_skipped = 7;
  r.metrics = {{"accuracy", {1.5, 2.0}},
               {"", {}},
               {"auc", {std::numeric_limits<double>::infinity(), -0.0, 1e308}}};
  r.predictions = PatternTensor({4, 3}, DType::kFloat32, 1);
  return r;
}
ReportTaskResponse SampleReportTaskResponse() { return {.counted = true}; }

PullDenseRequest SamplePullDenseRequest() {
  return {.known_version = -1, .compression = Compression::kFloat16};
}
PullDenseResponse SamplePullDenseResponse() {
  PullDenseResponse r;
  r.version = 31;
  r.params = {{"dense/kernel", PatternTensor({2, 3}, DType::kFloat32, 2)},
              {"dense/bias", PatternTensor({3}, DType::kBFloat16, 3)},
              {"step", PatternTensor({}, DType::kInt64, 4)},
              {"mask", PatternTensor({2, 2, 2}, DType::kUInt8, 5)},
              {"empty", PatternTensor({0, 4}, DType::kFloat32, 6)},
              {"undefined", Tensor()}};
  return r;
}

PullRowsRequest SamplePullRowsRequest() {
  return {.table = "embedding/embeddings", .ids = Tensor::FromInts({3}, {5, -1, 1LL << 40})};
}
PullRowsResponse SamplePullRowsResponse() {
  return {.values = PatternTensor({3, 4}, DType::kFloat32, 7)};
}

PushGradientsRequest SamplePushGradientsRequest() {
  PushGradientsRequest r;
  r.worker_id = 5;
  r.version = 30;
  r.task_id = (int64_t{1} << 60) | 77;
  r.minibatch = 6;
  r.settled_task = 76;
  r.settled_minibatches = 9;
  r.dense = {{"dense/kernel", PatternTensor({2, 3}, DType::kFloat32, 8)},
             {"dense/bias", Tensor()},
             {"bf16", PatternTensor({1, 1, 1, 1, 1, 1, 1, 2}, DType::kBFloat16, 9)}};
  r.sparse = {{"embedding/embeddings", Tensor::FromInts({2}, {9, 4}),
               PatternTensor({2, 4}, DType::kFloat32, 10)},
              {"empty", PatternTensor({0}, DType::kInt64), PatternTensor({0, 4}, DType::kFloat32)}};
  r.state = {{"batch_normalization/moving_mean", PatternTensor({4}, DType::kFloat32, 11)}};
  r.pull_dense = true;
  r.pull_compression = Compression::kBFloat16;
  return r;
}
PushGradientsResponse SamplePushGradientsResponse() {
  return {.accepted = false,
          .version = 31,
          .duplicate = true,
          .behind = true,
          .task_taken = 7,
          .params_version = 31,
          .params = {{"dense/kernel", PatternTensor({2, 3}, DType::kBFloat16, 12)}}};
}

JoinRingRequest SampleJoinRingRequest() { return {.worker_id = 6, .address = "10.0.3.7:50052"}; }
RingViewRequest SampleRingViewRequest() {
  return {.worker_id = -2, .known_version = std::numeric_limits<uint64_t>::max()};
}
RingView SampleRingView() {
  RingView v;
  v.version = 9;
  v.members = {{.worker_id = 4, .name = "worker-0", .address = "10.0.3.5:50052"},
               {.worker_id = 1LL << 40, .name = "", .address = ""},
               {.worker_id = 6, .name = std::string("worker-2\0", 9), .address = "[::1]:7"}};
  v.source_rank = 2;
  return v;
}
RingSyncedRequest SampleRingSyncedRequest() { return {.worker_id = 6, .version = 1ULL << 63}; }
RingSyncedResponse SampleRingSyncedResponse() { return {}; }

std::vector<std::pair<std::string, std::string>> SampleEncodings() {
  return {
      {"Task", Encode(SampleTask())},
      {"RegisterWorkerRequest", Encode(SampleRegisterWorkerRequest())},
      {"RegisterWorkerResponse", Encode(SampleRegisterWorkerResponse())},
      {"HeartbeatRequest", Encode(SampleHeartbeatRequest())},
      {"HeartbeatResponse", Encode(SampleHeartbeatResponse())},
      {"GetTaskRequest", Encode(SampleGetTaskRequest())},
      {"ReportTaskRequest", Encode(SampleReportTaskRequest())},
      {"ReportTaskResponse", Encode(SampleReportTaskResponse())},
      {"PullDenseRequest", Encode(SamplePullDenseRequest())},
      {"PullDenseResponse", Encode(SamplePullDenseResponse())},
      {"PullRowsRequest", Encode(SamplePullRowsRequest())},
      {"PullRowsResponse", Encode(SamplePullRowsResponse())},
      {"PushGradientsRequest", Encode(SamplePushGradientsRequest())},
      {"PushGradientsResponse", Encode(SamplePushGradientsResponse())},
      {"JoinRingRequest", Encode(SampleJoinRingRequest())},
      {"RingViewRequest", Encode(SampleRingViewRequest())},
      {"RingView", Encode(SampleRingView())},
      {"RingSyncedRequest", Encode(SampleRingSyncedRequest())},
      {"RingSyncedResponse", Encode(SampleRingSyncedResponse())},
  };
}

void ExpectSameTensor(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.defined(), b.defined());
  if (!a.defined()) return;
  EXPECT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.bytes(), b.bytes());
  if (a.bytes() > 0) {
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.bytes()), 0);
  }
}

namespace {
// Bitwise, so NaN payloads and -0.0 count.
void ExpectSameDouble(double a, double b) {
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << a << " vs " << b;
}
}  // namespace

void ExpectSame(const Task& a, const Task& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.dataset, b.dataset);
  EXPECT_EQ(a.begin, b.begin);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.model_version, b.model_version);
  EXPECT_EQ(a.seed, b.seed);
}
void ExpectSame(const RegisterWorkerRequest& a, const RegisterWorkerRequest& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.pid, b.pid);
}
void ExpectSame(const RegisterWorkerResponse& a, const RegisterWorkerResponse& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
}
void ExpectSame(const HeartbeatRequest& a, const HeartbeatRequest& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
}
void ExpectSame(const HeartbeatResponse& a, const HeartbeatResponse& b) {
  EXPECT_EQ(a.stop, b.stop);
}
void ExpectSame(const GetTaskRequest& a, const GetTaskRequest& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
  EXPECT_EQ(a.request, b.request);
}
void ExpectSame(const ReportTaskRequest& a, const ReportTaskRequest& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
  EXPECT_EQ(a.task_id, b.task_id);
  EXPECT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.model_version, b.model_version);
  ExpectSameDouble(a.loss_sum, b.loss_sum);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.records_skipped, b.records_skipped);
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (size_t i = 0; i < a.metrics.size(); ++i) {
    EXPECT_EQ(a.metrics[i].name, b.metrics[i].name);
    ASSERT_EQ(a.metrics[i].state.size(), b.metrics[i].state.size());
    for (size_t j = 0; j < a.metrics[i].state.size(); ++j) {
      ExpectSameDouble(a.metrics[i].state[j], b.metrics[i].state[j]);
    }
  }
  ExpectSameTensor(a.predictions, b.predictions);
}
void ExpectSame(const ReportTaskResponse& a, const ReportTaskResponse& b) {
  EXPECT_EQ(a.counted, b.counted);
}
void ExpectSame(const PullDenseRequest& a, const PullDenseRequest& b) {
  EXPECT_EQ(a.known_version, b.known_version);
  EXPECT_EQ(a.compression, b.compression);
}
void ExpectSame(const PullDenseResponse& a, const PullDenseResponse& b) {
  EXPECT_EQ(a.version, b.version);
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    EXPECT_EQ(a.params[i].name, b.params[i].name);
    ExpectSameTensor(a.params[i].value, b.params[i].value);
  }
}
void ExpectSame(const PullRowsRequest& a, const PullRowsRequest& b) {
  EXPECT_EQ(a.table, b.table);
  ExpectSameTensor(a.ids, b.ids);
}
void ExpectSame(const PullRowsResponse& a, const PullRowsResponse& b) {
  ExpectSameTensor(a.values, b.values);
}
void ExpectSame(const PushGradientsRequest& a, const PushGradientsRequest& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.task_id, b.task_id);
  EXPECT_EQ(a.minibatch, b.minibatch);
  EXPECT_EQ(a.settled_task, b.settled_task);
  EXPECT_EQ(a.settled_minibatches, b.settled_minibatches);
  ASSERT_EQ(a.dense.size(), b.dense.size());
  for (size_t i = 0; i < a.dense.size(); ++i) {
    EXPECT_EQ(a.dense[i].name, b.dense[i].name);
    ExpectSameTensor(a.dense[i].value, b.dense[i].value);
  }
  ASSERT_EQ(a.sparse.size(), b.sparse.size());
  for (size_t i = 0; i < a.sparse.size(); ++i) {
    EXPECT_EQ(a.sparse[i].table, b.sparse[i].table);
    ExpectSameTensor(a.sparse[i].ids, b.sparse[i].ids);
    ExpectSameTensor(a.sparse[i].values, b.sparse[i].values);
  }
  ASSERT_EQ(a.state.size(), b.state.size());
  for (size_t i = 0; i < a.state.size(); ++i) {
    EXPECT_EQ(a.state[i].name, b.state[i].name);
    ExpectSameTensor(a.state[i].value, b.state[i].value);
  }
  EXPECT_EQ(a.pull_dense, b.pull_dense);
  EXPECT_EQ(a.pull_compression, b.pull_compression);
}
void ExpectSame(const PushGradientsResponse& a, const PushGradientsResponse& b) {
  EXPECT_EQ(a.accepted, b.accepted);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.duplicate, b.duplicate);
  EXPECT_EQ(a.behind, b.behind);
  EXPECT_EQ(a.task_taken, b.task_taken);
  EXPECT_EQ(a.params_version, b.params_version);
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    EXPECT_EQ(a.params[i].name, b.params[i].name);
    ExpectSameTensor(a.params[i].value, b.params[i].value);
  }
}

void ExpectSame(const JoinRingRequest& a, const JoinRingRequest& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
  EXPECT_EQ(a.address, b.address);
}
void ExpectSame(const RingViewRequest& a, const RingViewRequest& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
  EXPECT_EQ(a.known_version, b.known_version);
}
void ExpectSame(const RingView& a, const RingView& b) {
  EXPECT_EQ(a.version, b.version);
  ASSERT_EQ(a.members.size(), b.members.size());
  for (size_t i = 0; i < a.members.size(); ++i) {
    EXPECT_EQ(a.members[i].worker_id, b.members[i].worker_id);
    EXPECT_EQ(a.members[i].name, b.members[i].name);
    EXPECT_EQ(a.members[i].address, b.members[i].address);
  }
  EXPECT_EQ(a.source_rank, b.source_rank);
}
void ExpectSame(const RingSyncedRequest& a, const RingSyncedRequest& b) {
  EXPECT_EQ(a.worker_id, b.worker_id);
  EXPECT_EQ(a.version, b.version);
}
void ExpectSame(const RingSyncedResponse&, const RingSyncedResponse&) {}

}  // namespace edl::roles::protocol::testing
