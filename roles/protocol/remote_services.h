// The services of roles/protocol/services.h across processes (docs/rpc.md):
// RemoteMaster and RemotePs are clients that encode each request, POST it
// over a net::RpcChannel and decode the answer; ServeMaster and ServePs
// register the matching handlers on a net::RpcServer.
//
// Paths: /edl.Master/{RegisterWorker,Heartbeat,GetTask,ReportTask,JoinRing,
// GetRingView,RingSynced} and
// /edl.Ps/{PullDense,PullRows,PushGradients}.
//
// Errors: a client call returns the channel's Status (Unavailable,
// DeadlineExceeded, Unauthenticated) or the remote service's own Status with
// its code and message; a response that does not decode is InvalidArgument
// naming the path and peer. A handler answers a request that does not decode
// with InvalidArgument naming the message and field, and never aborts.
// Calls are never retried here (only the caller knows what is idempotent).
//
// Thread-safe (calls are serialized over the channel's one connection).
#pragma once

#include <memory>
#include <string>

#include "net/rpc.h"
#include "roles/protocol/services.h"

namespace edl::roles::protocol {

// Where a remote role is and how long each call may take.
struct RemoteOptions {
  std::string host;
  int port = 0;
  std::string secret;
  net::Millis deadline{10000};
  net::ChannelOptions channel;
};

class RemoteMaster : public MasterService {
 public:
  explicit RemoteMaster(RemoteOptions options);
  RemoteMaster(std::string host, int port, std::string secret, net::Millis deadline);

  Result<RegisterWorkerResponse> RegisterWorker(const RegisterWorkerRequest& r) override;
  Result<HeartbeatResponse> Heartbeat(const HeartbeatRequest& r) override;
  Result<Task> GetTask(const GetTaskRequest& r) override;
  Result<ReportTaskResponse> ReportTask(const ReportTaskRequest& r) override;
  Result<RingView> JoinRing(const JoinRingRequest& r) override;
  Result<RingView> GetRingView(const RingViewRequest& r) override;
  Result<RingSyncedResponse> RingSynced(const RingSyncedRequest& r) override;

 private:
  net::Millis deadline_;
  std::unique_ptr<net::RpcChannel> channel_;
};

class RemotePs : public PsService {
 public:
  explicit RemotePs(RemoteOptions options);
  RemotePs(std::string host, int port, std::string secret, net::Millis deadline);

  Result<PullDenseResponse> PullDense(const PullDenseRequest& r) override;
  Result<PullRowsResponse> PullRows(const PullRowsRequest& r) override;
  Result<PushGradientsResponse> PushGradients(const PushGradientsRequest& r) override;

 private:
  net::Millis deadline_;
  std::unique_ptr<net::RpcChannel> channel_;
};

// Registers the seven /edl.Master/* handlers. `service` must outlive `server`'s
// serving (Stop() it first). Call before server.Start().
void ServeMaster(MasterService& service, net::RpcServer& server);
// Registers the three /edl.Ps/* handlers; as ServeMaster.
void ServePs(PsService& service, net::RpcServer& server);

}  // namespace edl::roles::protocol
