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
};

class PsService {
 public:
  virtual ~PsService() = default;
  virtual Result<PullDenseResponse> PullDense(const PullDenseRequest& r) = 0;
  virtual Result<PullRowsResponse> PullRows(const PullRowsRequest& r) = 0;
  virtual Result<PushGradientsResponse> PushGradients(const PushGradientsRequest& r) = 0;
};

}  // namespace edl::roles::protocol
