#include "roles/protocol/remote_services.h"

#include <functional>
#include <string_view>
#include <utility>

#include "roles/protocol/codec.h"

namespace edl::roles::protocol {
namespace {

constexpr const char* kRegisterWorker = "/edl.Master/RegisterWorker";
constexpr const char* kHeartbeat = "/edl.Master/Heartbeat";
constexpr const char* kGetTask = "/edl.Master/GetTask";
constexpr const char* kReportTask = "/edl.Master/ReportTask";
constexpr const char* kJoinRing = "/edl.Master/JoinRing";
constexpr const char* kGetRingView = "/edl.Master/GetRingView";
constexpr const char* kRingSynced = "/edl.Master/RingSynced";
constexpr const char* kPullDense = "/edl.Ps/PullDense";
constexpr const char* kPullRows = "/edl.Ps/PullRows";
constexpr const char* kPushGradients = "/edl.Ps/PushGradients";

// Encodes, calls, decodes. Transport and remote errors pass through as they
// are; an undecodable answer names the path and the peer.
template <typename Response, typename Request>
Result<Response> CallRemote(net::RpcChannel& channel, const char* path, const Request& request,
                            net::Millis deadline) {
  Result<net::Bytes> body = channel.Send(path, EncodePayload(request), deadline);
  if (!body.ok()) return body.status();
  Result<Response> response = Decode<Response>(*body);
  if (!response.ok()) {
    return response.status().WithPrefix(std::string("response to ") + path + " from " +
                                        channel.host() + ":" + std::to_string(channel.port()));
  }
  return response;
}

// A handler that decodes a Request (its tensors view the received body),
// hands it to `method` and encodes the Response (its large tensors are sent
// from their own storage).
template <typename Request, typename Response>
net::RpcBodyHandler Handler(std::function<Result<Response>(const Request&)> method) {
  return [method = std::move(method)](const net::Bytes& body) -> Result<net::Payload> {
    Result<Request> request = Decode<Request>(body);
    if (!request.ok()) return request.status();
    Result<Response> response = method(*request);
    if (!response.ok()) return response.status();
    return EncodePayload(*response);
  };
}

std::unique_ptr<net::RpcChannel> MakeChannel(RemoteOptions& o) {
  return std::make_unique<net::RpcChannel>(std::move(o.host), o.port, std::move(o.secret),
                                           o.channel);
}

RemoteOptions Options(std::string host, int port, std::string secret, net::Millis deadline) {
  RemoteOptions o;
  o.host = std::move(host);
  o.port = port;
  o.secret = std::move(secret);
  o.deadline = deadline;
  return o;
}

}  // namespace

// ---- RemoteMaster ----------------------------------------------------------

RemoteMaster::RemoteMaster(RemoteOptions options)
    : deadline_(options.deadline), channel_(MakeChannel(options)) {}

RemoteMaster::RemoteMaster(std::string host, int port, std::string secret, net::Millis deadline)
    : RemoteMaster(Options(std::move(host), port, std::move(secret), deadline)) {}

Result<RegisterWorkerResponse> RemoteMaster::RegisterWorker(const RegisterWorkerRequest& r) {
  return CallRemote<RegisterWorkerResponse>(*channel_, kRegisterWorker, r, deadline_);
}

Result<HeartbeatResponse> RemoteMaster::Heartbeat(const HeartbeatRequest& r) {
  return CallRemote<HeartbeatResponse>(*channel_, kHeartbeat, r, deadline_);
}

Result<Task> RemoteMaster::GetTask(const GetTaskRequest& r) {
  return CallRemote<Task>(*channel_, kGetTask, r, deadline_);
}

Result<ReportTaskResponse> RemoteMaster::ReportTask(const ReportTaskRequest& r) {
  return CallRemote<ReportTaskResponse>(*channel_, kReportTask, r, deadline_);
}

Result<RingView> RemoteMaster::JoinRing(const JoinRingRequest& r) {
  return CallRemote<RingView>(*channel_, kJoinRing, r, deadline_);
}

Result<RingView> RemoteMaster::GetRingView(const RingViewRequest& r) {
  return CallRemote<RingView>(*channel_, kGetRingView, r, deadline_);
}

Result<RingSyncedResponse> RemoteMaster::RingSynced(const RingSyncedRequest& r) {
  return CallRemote<RingSyncedResponse>(*channel_, kRingSynced, r, deadline_);
}

// ---- RemotePs --------------------------------------------------------------

RemotePs::RemotePs(RemoteOptions options)
    : deadline_(options.deadline), channel_(MakeChannel(options)) {}

RemotePs::RemotePs(std::string host, int port, std::string secret, net::Millis deadline)
    : RemotePs(Options(std::move(host), port, std::move(secret), deadline)) {}

Result<PullDenseResponse> RemotePs::PullDense(const PullDenseRequest& r) {
  return CallRemote<PullDenseResponse>(*channel_, kPullDense, r, deadline_);
}

Result<PullRowsResponse> RemotePs::PullRows(const PullRowsRequest& r) {
  return CallRemote<PullRowsResponse>(*channel_, kPullRows, r, deadline_);
}

Result<PushGradientsResponse> RemotePs::PushGradients(const PushGradientsRequest& r) {
  return CallRemote<PushGradientsResponse>(*channel_, kPushGradients, r, deadline_);
}

// ---- Servers -----------------------------------------------------------------

void ServeMaster(MasterService& service, net::RpcServer& server) {
  MasterService* s = &service;
  server.HandleRpcBody(kRegisterWorker,
                       Handler<RegisterWorkerRequest, RegisterWorkerResponse>(
                           [s](const RegisterWorkerRequest& r) { return s->RegisterWorker(r); }));
  server.HandleRpcBody(kHeartbeat, Handler<HeartbeatRequest, HeartbeatResponse>(
                                       [s](const HeartbeatRequest& r) { return s->Heartbeat(r); }));
  server.HandleRpcBody(kGetTask, Handler<GetTaskRequest, Task>(
                                     [s](const GetTaskRequest& r) { return s->GetTask(r); }));
  server.HandleRpcBody(kReportTask,
                       Handler<ReportTaskRequest, ReportTaskResponse>(
                           [s](const ReportTaskRequest& r) { return s->ReportTask(r); }));
  server.HandleRpcBody(kJoinRing, Handler<JoinRingRequest, RingView>(
                                      [s](const JoinRingRequest& r) { return s->JoinRing(r); }));
  server.HandleRpcBody(kGetRingView,
                       Handler<RingViewRequest, RingView>(
                           [s](const RingViewRequest& r) { return s->GetRingView(r); }));
  server.HandleRpcBody(kRingSynced,
                       Handler<RingSyncedRequest, RingSyncedResponse>(
                           [s](const RingSyncedRequest& r) { return s->RingSynced(r); }));
}

void ServePs(PsService& service, net::RpcServer& server) {
  PsService* s = &service;
  server.HandleRpcBody(kPullDense, Handler<PullDenseRequest, PullDenseResponse>(
                                       [s](const PullDenseRequest& r) { return s->PullDense(r); }));
  server.HandleRpcBody(kPullRows, Handler<PullRowsRequest, PullRowsResponse>(
                                      [s](const PullRowsRequest& r) { return s->PullRows(r); }));
  server.HandleRpcBody(kPushGradients,
                       Handler<PushGradientsRequest, PushGradientsResponse>(
                           [s](const PushGradientsRequest& r) { return s->PushGradients(r); }));
}

}  // namespace edl::roles::protocol
