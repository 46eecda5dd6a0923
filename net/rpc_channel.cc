// RpcChannel: a synchronous Beast HTTP/1.1 client over one keep-alive
// connection. Each blocking step runs the channel's own io_context until the
// step's async operation completes; beast::tcp_stream's expiry bounds every
// step by the call's deadline.
#include <poll.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "net/http_beast_impl.h"
#include "net/rpc.h"
#include "net/status_mapping.h"

namespace edl::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

std::string MillisString(Millis m) { return std::to_string(m.count()) + " ms"; }

}  // namespace

struct RpcChannel::Impl {
  Impl(std::string h, int p, std::string s, ChannelOptions o)
      : host(std::move(h)),
        port(p),
        secret(std::move(s)),
        options(o),
        name(host + ":" + std::to_string(port)),
        backoff(o.initial_backoff),
        rng(std::random_device{}()) {}

  Result<Bytes> Exchange(http::verb verb, const std::string& path,
                         const Payload& body, Millis timeout);
  Status Connect(TimePoint deadline, const std::string& path, Millis timeout);
  Status TryConnect(TimePoint deadline, const std::string& path,
                    Millis timeout);
  Status Broken(const beast::error_code& ec, const std::string& path,
                Millis timeout);
  bool ConnectionLooksClosed();

  // Starts one async operation with a completion handler `(ec, ...)` and runs
  // the io_context until it (and its timer) completes.
  template <typename Initiate>
  beast::error_code Run(Initiate&& initiate) {
    beast::error_code result;
    bool done = false;
    initiate([&](beast::error_code ec, auto&&...) {
      result = ec;
      done = true;
    });
    ioc.restart();
    ioc.run();
    EDL_CHECK(done) << "rpc channel operation did not complete";
    return result;
  }

  const std::string host;
  const int port;
  const std::string secret;
  const ChannelOptions options;
  const std::string name;  // "host:port"

  std::mutex mu;  // held for a whole call; guards everything below
  asio::io_context ioc{1};
  std::optional<beast::tcp_stream> stream;  // set while connected
  beast::flat_buffer buffer;                // bytes read past a response
  TimePoint retry_after{};                  // no connect attempt before this
  Millis backoff;  // the next failure's backoff (before jitter)
  std::string last_connect_error;
  std::minstd_rand rng;
};

bool RpcChannel::Impl::ConnectionLooksClosed() {
  // An idle keep-alive connection has nothing to read; readable means the
  // server closed it (EOF/reset) or broke protocol. Checked before sending,
  // so dropping it cannot lose a request.
  pollfd p{stream->socket().native_handle(), POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

Status RpcChannel::Impl::Broken(const beast::error_code& ec,
                                const std::string& path, Millis timeout) {
  stream.reset();
  buffer.clear();
  if (ec == beast::error::timeout) {
    return DeadlineExceeded(name + path + ": no answer within " +
                            MillisString(timeout));
  }
  return Unavailable(name + path + ": connection lost: " + ec.message());
}

Status RpcChannel::Impl::TryConnect(TimePoint deadline, const std::string& path,
                                    Millis timeout) {
  TimePoint connect_deadline =
      std::min(deadline, SteadyClock::now() + options.connect_timeout);
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
  bool resolved = false;
  resolver.async_resolve(
      host, std::to_string(port),
      [&](beast::error_code e, tcp::resolver::results_type r) {
        ec = e;
        endpoints = std::move(r);
        resolved = true;
      });
  ioc.restart();
  ioc.run_until(connect_deadline);
  if (!resolved) {
    resolver.cancel();
    ioc.restart();
    ioc.run();
    ec = asio::error::timed_out;
  }
  if (ec) return Unavailable(name + ": cannot resolve host: " + ec.message());

  stream.emplace(ioc);
  stream->expires_at(connect_deadline);
  ec = Run([&](auto handler) { stream->async_connect(endpoints, handler); });
  if (ec) {
    stream.reset();
    if (ec == beast::error::timeout && connect_deadline == deadline) {
      return DeadlineExceeded(name + path + ": could not connect within " +
                              MillisString(timeout));
    }
    if (ec == beast::error::timeout) {
      return Unavailable(name + ": cannot connect: no answer within " +
                         MillisString(options.connect_timeout));
    }
    return Unavailable(name + ": cannot connect: " + ec.message());
  }
  stream->socket().set_option(tcp::no_delay(true), ec);
  buffer.clear();
  return Status::Ok();
}

Status RpcChannel::Impl::Connect(TimePoint deadline, const std::string& path,
                                 Millis timeout) {
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

Result<Bytes> RpcChannel::Impl::Exchange(http::verb verb,
                                         const std::string& path,
                                         const Payload& body, Millis timeout) {
  std::lock_guard<std::mutex> lock(mu);
  const TimePoint deadline = SteadyClock::now() + timeout;
  if (stream && ConnectionLooksClosed()) {
    stream.reset();
    buffer.clear();
  }
  if (!stream) EDL_RETURN_IF_ERROR(Connect(deadline, path, timeout));

  http::request<http::empty_body> request(verb, path, 11);
  request.set(http::field::host, name);
  request.set(http::field::authorization, "Bearer " + secret);
  request.keep_alive(true);
  if (verb == http::verb::post) {
    request.set(http::field::content_type, "application/octet-stream");
    request.content_length(body.size());
  }
  std::string header;
  {
    std::ostringstream out;
    out << request.base();
    header = std::move(out).str();
  }
  // Header and the payload's pieces (tensor storage) in one gather write.
  stream->expires_at(deadline);
  beast::error_code ec = Run([&](auto handler) {
    asio::async_write(*stream, internal::GatherBuffers(header, {}, body),
                      internal::LargeTransfers{}, handler);
  });
  if (ec) return Broken(ec, path, timeout);

  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  ec = Run([&](auto handler) {
    http::async_read_header(*stream, buffer, parser, handler);
  });
  Bytes answer;
  bool known_length = false;
  if (!ec) {
    // A sized body is read straight into a pooled block.
    if (auto known = internal::StartKnownLengthBody(parser, buffer)) {
      if (!known->done()) {
        size_t n = 0;
        ec = Run([&](auto handler) {
          asio::async_read(*stream, known->Rest(), internal::LargeTransfers{},
                           [&n, handler](beast::error_code e, size_t got) mutable {
                             n = got;
                             handler(e, got);
                           });
        });
        known->Filled(n);
      }
      answer = std::move(*known).Take();
      known_length = true;
    } else if (!parser.is_done()) {
      ec = Run([&](auto handler) {
        http::async_read(*stream, buffer, parser, handler);
      });
    }
  }
  if (ec) return Broken(ec, path, timeout);
  http::response<http::string_body> response = parser.release();
  if (!response.keep_alive()) {
    stream.reset();
    buffer.clear();
  }
  int status = static_cast<int>(response.result_int());
  if (!known_length) answer = Bytes::Copy(response.body());
  if (status >= 200 && status < 300) return answer;
  StatusCode code = CodeForHttpStatus(status);
  std::optional<StatusCode> named =
      ParseStatusCodeName(response[kEdlStatusHeader]);
  if (named && *named != StatusCode::kOk) code = *named;
  if (code == StatusCode::kOk) code = StatusCode::kInternal;
  std::string message(answer.view());
  if (message.empty()) {
    message = name + path + ": HTTP " + std::to_string(status);
  }
  return Status(code, std::move(message));
}

RpcChannel::RpcChannel(std::string host, int port, std::string secret,
                       ChannelOptions options)
    : impl_(std::make_unique<Impl>(std::move(host), port, std::move(secret),
                                   options)) {}

RpcChannel::~RpcChannel() = default;

Result<std::string> RpcChannel::Call(const std::string& path,
                                     std::string_view body, Millis deadline) {
  Payload payload;
  payload.Borrow(body.data(), body.size(), nullptr);  // the call blocks
  Result<Bytes> answer = impl_->Exchange(http::verb::post, path, payload, deadline);
  if (!answer.ok()) return answer.status();
  return std::string(answer->view());
}

Result<Bytes> RpcChannel::Send(const std::string& path, const Payload& body,
                               Millis deadline) {
  return impl_->Exchange(http::verb::post, path, body, deadline);
}

Result<std::string> RpcChannel::Get(const std::string& path, Millis deadline) {
  Result<Bytes> answer = impl_->Exchange(http::verb::get, path, Payload(), deadline);
  if (!answer.ok()) return answer.status();
  return std::string(answer->view());
}

const std::string& RpcChannel::host() const { return impl_->host; }

int RpcChannel::port() const { return impl_->port; }

}  // namespace edl::net
