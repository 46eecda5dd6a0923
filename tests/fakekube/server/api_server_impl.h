// The inside of ApiServer (api_server.h), shared by its three files:
// api_server.cc (starting, stopping, restarting, the test hooks),
// api_server_connection.cc (accepting, reading and dispatching requests) and
// api_server_streams.cc (watches and followed logs, which keep a connection
// busy). Not for use outside them.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/fakekube/server/api_faults.h"
#include "tests/fakekube/server/api_handlers.h"
#include "tests/fakekube/server/api_server.h"
#include "tests/fakekube/server/audit_log.h"
#include "tests/fakekube/server/certs.h"
#include "tests/fakekube/server/identity.h"
#include "tests/fakekube/server/request.h"
#include "tests/fakekube/server/request_attributes.h"
#include "tests/fakekube/server/resources.h"
#include "tests/fakekube/server/watch_filter.h"

namespace edl::fakekube {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

inline constexpr auto kWriteTimeout = std::chrono::seconds(60);

inline auto Redirect(beast::error_code& ec) {
  return asio::redirect_error(asio::use_awaitable, ec);
}

// The completion handler of every coroutine the server spawns.
void LogEscapedException(std::exception_ptr e);

// Events for one watch, handed from the store's dispatching thread to the
// watch's coroutine; Wake() posts a cancel of the coroutine's timer to its
// strand.
struct WatchQueue : std::enable_shared_from_this<WatchQueue> {
  std::mutex mu;  // guards everything below
  std::deque<WatchEvent> events;
  uint64_t last_seen_rv = 0;  // newest event of any resource seen
  bool closed = false;
  bool cut = false;                     // CutWatches(): drop the connection without ending the body
  asio::steady_timer* timer = nullptr;  // touched only on `executor`
  asio::any_io_executor executor;

  // REQUIRES: mu held.
  void Wake() {
    if (closed || !timer) return;
    asio::post(executor, [self = shared_from_this()] {
      std::lock_guard<std::mutex> lock(self->mu);
      if (self->timer) self->timer->cancel();
    });
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
    timer = nullptr;
  }
};

struct ApiServer::Impl {
  Impl(Store& s, Options o)
      : store(s),
        options(std::move(o)),
        credentials{options.token, options.user_tokens, options.service_account_key} {}

  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> ServeTls(tcp::socket socket);
  asio::awaitable<void> ServePlain(tcp::socket socket);
  template <class Stream>
  asio::awaitable<void> Serve(Stream& stream);
  template <class Stream>
  asio::awaitable<bool> Dispatch(Stream& stream, http::request<http::string_body>& req);
  template <class Stream>
  asio::awaitable<bool> Watch(Stream& stream, unsigned version, bool keep_alive,
                              const WatchPlan& plan, const ResourceInfo& resource);
  template <class Stream>
  asio::awaitable<bool> FollowLog(Stream& stream, unsigned version, bool keep_alive,
                                  const ParsedTarget& target, const ResourcePath& path,
                                  AuditEvent& audit_event);  // recorded with the answer's code
  // Under Options::rbac, the 403 for `user` doing `request` unless the
  // Roles allow it; nullopt otherwise.
  std::optional<ApiError> Refusal(const UserInfo& user, const RequestAttributes& request) const;
  // The test hooks under /debug/fakekube/ (api_server.h).
  ApiResponse Control(const ApiRequest& request, const ParsedTarget& target);
  // Binds `port` (0: any), starts the threads. REQUIRES: mu held, not listening.
  Status ListenLocked(int port);
  // Closes every connection and joins the threads. REQUIRES: mu held.
  void HaltLocked();
  // Halts, waits `down` (unless Stop() comes), listens on the same port.
  Status RestartLocked(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds down);
  size_t CutWatches();
  size_t watches_count() const {
    std::lock_guard<std::mutex> lock(watches_mu);
    return watches.size();
  }

  Store& store;
  const Options options;
  const Credentials credentials;
  AuditLog audit;
  ServerCertificates certs;
  std::unique_ptr<ssl::context> tls;

  // Guards started, stopped, ioc, acceptor and threads. Held while the
  // threads are joined: handlers never take it.
  std::mutex mu;
  bool started = false;
  bool stopped = false;
  std::condition_variable stopped_cv;  // Stop() ends a restart's pause
  std::atomic<bool> stopping{false};   // set first thing by Stop()
  std::atomic<int64_t> restarts{0};    // completed

  std::mutex control_mu;  // guards proxy_target, restarter and restarting
  std::thread restarter;  // a restart asked for through Control()
  bool restarting = false;
  ApiFaults faults;
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  ProxyTarget proxy_target;  // guarded by control_mu
  std::atomic<int> port{0};

  mutable std::mutex watches_mu;  // guards watches
  std::set<std::shared_ptr<WatchQueue>> watches;
};

template <class Stream>
asio::awaitable<bool> WriteResponse(Stream& stream, unsigned version, bool keep_alive,
                                    ApiResponse r) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::content_type, r.content_type);
  res.set(http::field::cache_control, "no-cache, private");
  res.keep_alive(keep_alive);
  for (const auto& [name, value] : r.headers) res.set(name, value);
  res.body() = std::move(r.body);
  res.prepare_payload();
  beast::get_lowest_layer(stream).expires_after(kWriteTimeout);
  beast::error_code ec;
  co_await http::async_write(stream, res, Redirect(ec));
  co_return !ec && keep_alive;
}

// The header of a chunked response; the body follows as WriteChunk()s.
template <class Stream>
asio::awaitable<bool> WriteChunkedHeader(Stream& stream, unsigned version, bool keep_alive,
                                         const std::string& content_type) {
  http::response<http::empty_body> res{http::status::ok, version};
  res.set(http::field::content_type, content_type);
  res.set(http::field::cache_control, "no-cache, private");
  res.keep_alive(keep_alive);
  res.chunked(true);
  http::response_serializer<http::empty_body> serializer{res};
  beast::get_lowest_layer(stream).expires_after(kWriteTimeout);
  beast::error_code ec;
  co_await http::async_write_header(stream, serializer, Redirect(ec));
  co_return !ec;
}

template <class Stream>
asio::awaitable<bool> WriteChunk(Stream& stream, const std::string& data) {
  if (data.empty()) co_return true;  // an empty chunk would end the body
  beast::get_lowest_layer(stream).expires_after(kWriteTimeout);
  beast::error_code ec;
  co_await asio::async_write(stream, http::make_chunk(asio::buffer(data)), Redirect(ec));
  co_return !ec;
}

template <class Stream>
asio::awaitable<bool> WriteLastChunk(Stream& stream) {
  beast::get_lowest_layer(stream).expires_after(kWriteTimeout);
  beast::error_code ec;
  co_await asio::async_write(stream, http::make_chunk_last(), Redirect(ec));
  co_return !ec;
}

}  // namespace edl::fakekube
