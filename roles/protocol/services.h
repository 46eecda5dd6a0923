// The services the roles offer each other. A worker is written against
// MasterService& and PsService&, and cannot tell whether they are in the
// same process (tests) or remote (roles/protocol/remote_services.h).
// Implementations are thread-safe.
#pragma once

#include "base/status.h"
#include "roles/protocol/messages.h"

namespace edl::roles::protocol {

class MasterService {
 public:
  virtual ~MasterService() = default;
  virtual Result<RegisterWorkerResponse> RegisterWorker(const RegisterWorkerRequest& r) = 0;
  virtual Result<HeartbeatResponse> Heartbeat(const HeartbeatRequest& r) = 0;
  virtual Result<Task> GetTask(const GetTaskRequest& r) = 0;
  virtual Result<ReportTaskResponse> ReportTask(const ReportTaskRequest& r) = 0;

  // The allreduce ring (docs/allreduce.md). A master that keeps no ring
  // answers Unimplemented.
  // Adds the worker to the ring (or moves it to the end with its new
  // address); returns the view after the join.
  virtual Result<RingView> JoinRing(const JoinRingRequest&) {
    return Unimplemented("this master keeps no allreduce ring (JoinRing)");
  }
  virtual Result<RingView> GetRingView(const RingViewRequest&) {
    return Unimplemented("this master keeps no allreduce ring (GetRingView)");
  }
  virtual Result<RingSyncedResponse> RingSynced(const RingSyncedRequest&) {
    return Unimplemented("this master keeps no allreduce ring (RingSynced)");
  }
};

class PsService {
 public:
  virtual ~PsService() = default;
  virtual Result<PullDenseResponse> PullDense(const PullDenseRequest& r) = 0;
  virtual Result<PullRowsResponse> PullRows(const PullRowsRequest& r) = 0;
  virtual Result<PushGradientsResponse> PushGradients(const PushGradientsRequest& r) = 0;
};

}  // namespace edl::roles::protocol
