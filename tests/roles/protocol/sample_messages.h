// Test helpers: one fully populated sample of every protocol message (every
// field set, tensors of each dtype incl. empty, scalar and undefined) and
// field-by-field gtest comparisons.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "roles/protocol/messages.h"
#include "tensor/tensor.h"

namespace edl::roles::protocol::testing {

// A tensor of `dtype` and `shape` whose bytes are a simple pattern.
tensor::Tensor PatternTensor(tensor::Shape shape, tensor::DType dtype, int salt = 0);

Task SampleTask();
RegisterWorkerRequest SampleRegisterWorkerRequest();
RegisterWorkerResponse SampleRegisterWorkerResponse();
HeartbeatRequest SampleHeartbeatRequest();
HeartbeatResponse SampleHeartbeatResponse();
GetTaskRequest SampleGetTaskRequest();
ReportTaskRequest SampleReportTaskRequest();
ReportTaskResponse SampleReportTaskResponse();
PullDenseRequest SamplePullDenseRequest();
PullDenseResponse SamplePullDenseResponse();
PullRowsRequest SamplePullRowsRequest();
PullRowsResponse SamplePullRowsResponse();
PushGradientsRequest SamplePushGradientsRequest();
PushGradientsResponse SamplePushGradientsResponse();
JoinRingRequest SampleJoinRingRequest();
RingViewRequest SampleRingViewRequest();
RingView SampleRingView();
RingSyncedRequest SampleRingSyncedRequest();
RingSyncedResponse SampleRingSyncedResponse();

// (message name, encoding) of every sample above.
std::vector<std::pair<std::string, std::string>> SampleEncodings();

// gtest EXPECTs that a and b agree in every field (tensors: definedness,
// dtype, shape and bytes).
void ExpectSameTensor(const tensor::Tensor& a, const tensor::Tensor& b);
void ExpectSame(const Task& a, const Task& b);
void ExpectSame(const RegisterWorkerRequest& a, const RegisterWorkerRequest& b);
void ExpectSame(const RegisterWorkerResponse& a, const RegisterWorkerResponse& b);
void ExpectSame(const HeartbeatRequest& a, const HeartbeatRequest& b);
void ExpectSame(const HeartbeatResponse& a, const HeartbeatResponse& b);
void ExpectSame(const GetTaskRequest& a, const GetTaskRequest& b);
void ExpectSame(const ReportTaskRequest& a, const ReportTaskRequest& b);
void ExpectSame(const ReportTaskResponse& a, const ReportTaskResponse& b);
void ExpectSame(const PullDenseRequest& a, const PullDenseRequest& b);
void ExpectSame(const PullDenseResponse& a, const PullDenseResponse& b);
void ExpectSame(const PullRowsRequest& a, const PullRowsRequest& b);
void ExpectSame(const PullRowsResponse& a, const PullRowsResponse& b);
void ExpectSame(const PushGradientsRequest& a, const PushGradientsRequest& b);
void ExpectSame(const PushGradientsResponse& a, const PushGradientsResponse& b);
void ExpectSame(const JoinRingRequest& a, const JoinRingRequest& b);
void ExpectSame(const RingViewRequest& a, const RingViewRequest& b);
void ExpectSame(const RingView& a, const RingView& b);
void ExpectSame(const RingSyncedRequest& a, const RingSyncedRequest& b);
void ExpectSame(const RingSyncedResponse& a, const RingSyncedResponse& b);

}  // namespace edl::roles::protocol::testing
