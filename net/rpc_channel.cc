// RpcChannel: one keep-alive HttpConnection (net/http_connection.h, the
// client shared with kube/) plus what an RPC client adds: the job secret on
// every request, reconnecting with a jittered backoff, and errors mapped
// back to the handler's Status.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include "net/http_connection.h"
#include "net/rpc.h"
#include "net/status_mapping.h"

namespace edl::net {
namespace {

std::string MillisString(Millis m) { return std::to_string(m.count()) + " ms"; }

}  // namespace

struct RpcChannel::Impl {
  Impl(std::string h, int p, std::string s, ChannelOptions o)
      : host(std::move(h)),
        port(p),
        secret(std::move(s)),
        options(o),
        endpoint(PlainEndpoint(host, port)),
        name(host + ":" + std::to_string(port)),
        backoff(o.initial_backoff),
        rng(std::random_device{}()) {}

  Result<Bytes> Exchange(const char* method, const std::string& path, const Payload& body,
                         Millis timeout);
  Status Connect(TimePoint deadline, const std::string& path, Millis timeout);
  Status TryConnect(TimePoint deadline, const std::string& path, Millis timeout);
  // Drops the connection after a failed step; the error the caller sees.
  Status Broken(const Status& failure, const std::string& path, Millis timeout);

  const std::string host;
  const int port;
  const std::string secret;
  const ChannelOptions options;
  const Endpoint endpoint;
  const std::string name;  // "host:port"

  std::mutex mu;                               // held for a whole call; guards everything below
  std::unique_ptr<HttpConnection> connection;  // set while connected
  TimePoint retry_after{};                     // no connect attempt before this
  Millis backoff;                              // the next failure's backoff (before jitter)
  std::string last_connect_error;
  std::minstd_rand rng;
};

Status RpcChannel::Impl::Broken(const Status& failure, const std::string& path, Millis timeout) {
  connection.reset();
  if (failure.code() == StatusCode::kDeadlineExceeded) {
    return DeadlineExceeded(name + path + ": no answer within " + MillisString(timeout));
  }
  // HttpConnection says "host:port: <step>: <why>".
  std::string why = failure.message();
  const size_t colon = why.rfind(": ");
  if (colon != std::string::npos) why = why.substr(colon + 2);
  return Unavailable(name + path + ": connection lost: " + why);
}

Status RpcChannel::Impl::TryConnect(TimePoint deadline, const std::string& path, Millis timeout) {
  const TimePoint connect_deadline =
      std::min(deadline, SteadyClock::now() + options.connect_timeout);
  Result<std::unique_ptr<HttpConnection>> made =
      HttpConnection::Connect(endpoint, nullptr, connect_deadline);
  if (made.ok()) {
    connection = std::move(made).value();
    return Status::Ok();
  }
  if (made.status().code() == StatusCode::kDeadlineExceeded) {
    if (connect_deadline == deadline) {
      return DeadlineExceeded(name + path + ": could not connect within " + MillisString(timeout));
    }
    return Unavailable(name + ": cannot connect: no answer within " +
                       MillisString(options.connect_timeout));
  }
  return Unavailable(made.status().message());  // "host:port: cannot connect: ..."
}

Status RpcChannel::Impl::Connect(TimePoint deadline, const std::string& path, Millis timeout) {
  if (SteadyClock::now() < retry_after) {
    if (retry_after > deadline) {
      std::this_thread::sleep_until(deadline);
      return Unavailable(name + ": cannot connect (" + last_connect_error +
                         "); backing off before the next attempt");
    }
    std::this_thread::sleep_until(retry_after);
  }
  Status status = TryConnect(deadline, path, timeout);
  if (status.ok()) {
    backoff = options.initial_backoff;
    retry_after = {};
  } else if (status.code() == StatusCode::kUnavailable) {
    // Jitter in [backoff/2, backoff] keeps many clients from reconnecting in
    // lockstep; the backoff doubles up to max_backoff.
    int64_t ms = std::max<int64_t>(backoff.count(), 1);
    std::uniform_int_distribution<int64_t> jitter(ms / 2, ms);
    retry_after = SteadyClock::now() + Millis(jitter(rng));
    backoff = std::min(backoff * 2, options.max_backoff);
    last_connect_error = status.message();
  }
  return status;
}

Result<Bytes> RpcChannel::Impl::Exchange(const char* method, const std::string& path,
                                         const Payload& body, Millis timeout) {
  std::lock_guard<std::mutex> lock(mu);
  const TimePoint deadline = SteadyClock::now() + timeout;
  // An idle keep-alive connection that is readable was closed by the server
  // (or broke protocol); checked before sending, so dropping it cannot lose
  // a request.
  if (connection && connection->LooksClosed()) connection.reset();
  if (!connection) EDL_RETURN_IF_ERROR(Connect(deadline, path, timeout));

  std::vector<std::pair<std::string, std::string>> headers = {
      {"Authorization", "Bearer " + secret}};
  const bool post = std::string_view(method) == "POST";
  if (post) headers.emplace_back("Content-Type", "application/octet-stream");
  Status sent = connection->Send(method, path, headers, body, deadline);
  if (!sent.ok()) return Broken(sent, path, timeout);
  Result<HttpHead> head = connection->ReadHead(deadline);
  if (!head.ok()) return Broken(head.status(), path, timeout);
  Result<Bytes> answer = connection->ReadWholeBodyBytes(options.max_body_bytes, deadline);
  if (!answer.ok()) {
    if (answer.status().code() == StatusCode::kResourceExhausted) {
      connection.reset();
      return Status(StatusCode::kResourceExhausted, name + path + ": " + answer.status().message());
    }
    return Broken(answer.status(), path, timeout);
  }
  if (!head->keep_alive) connection.reset();
  const int status = head->status;
  if (status >= 200 && status < 300) return answer;
  StatusCode code = CodeForHttpStatus(status);
  std::optional<StatusCode> named =
      ParseStatusCodeName(head->Header(std::string(kEdlStatusHeader)));
  if (named && *named != StatusCode::kOk) code = *named;
  if (code == StatusCode::kOk) code = StatusCode::kInternal;
  std::string message(answer->view());
  if (message.empty()) message = name + path + ": HTTP " + std::to_string(status);
  return Status(code, std::move(message));
}

RpcChannel::RpcChannel(std::string host, int port, std::string secret, ChannelOptions options)
    : impl_(std::make_unique<Impl>(std::move(host), port, std::move(secret), options)) {}

RpcChannel::~RpcChannel() = default;

Result<std::string> RpcChannel::Call(const std::string& path, std::string_view body,
                                     Millis deadline) {
  Payload payload;
  payload.Borrow(body.data(), body.size(), nullptr);  // the call blocks
  Result<Bytes> answer = impl_->Exchange("POST", path, payload, deadline);
  if (!answer.ok()) return answer.status();
  return std::string(answer->view());
}

Result<Bytes> RpcChannel::Send(const std::string& path, const Payload& body, Millis deadline) {
  return impl_->Exchange("POST", path, body, deadline);
}

Result<std::string> RpcChannel::Get(const std::string& path, Millis deadline) {
  Result<Bytes> answer = impl_->Exchange("GET", path, Payload(), deadline);
  if (!answer.ok()) return answer.status();
  return std::string(answer->view());
}

const std::string& RpcChannel::host() const { return impl_->host; }

int RpcChannel::port() const { return impl_->port; }

}  // namespace edl::net
