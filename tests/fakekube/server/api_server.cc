// ApiServer: sockets, TLS and streaming (see api_server.h). Requests that
// answer at once go to api_handlers.cc and proxied GETs to proxy.cc;
// watches and followed logs are served here because they keep the
// connection busy.
#include "tests/fakekube/server/api_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/logging.h"
#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/api_faults.h"
#include "tests/fakekube/server/api_handlers.h"
#include "tests/fakekube/server/certs.h"
#include "tests/fakekube/server/discovery.h"
#include "tests/fakekube/server/kubeconfig.h"
#include "tests/fakekube/server/pod_log.h"
#include "tests/fakekube/server/proxy.h"
#include "tests/fakekube/server/request.h"
#include "tests/fakekube/server/resources.h"
#include "tests/fakekube/server/watch_filter.h"

namespace edl::fakekube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kIdleTimeout = std::chrono::minutes(5);  // between requests
constexpr auto kWriteTimeout = std::chrono::seconds(60);
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kLogPollInterval = std::chrono::milliseconds(100);
constexpr size_t kMaxRequestBody = size_t{3} << 20;  // etcd's request limit

auto Redirect(beast::error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

void LogEscapedException(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    EDL_LOG(WARNING) << "fake kube api server: connection ended by exception: " << ex.what();
  } catch (...) {
    EDL_LOG(WARNING) << "fake kube api server: connection ended by an exception";
  }
}

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

bool Authorized(std::string_view header, const std::string& token) {
  if (token.empty()) return true;
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  size_t space = header.find(' ');
  if (space == std::string_view::npos) return false;
  std::string scheme(header.substr(0, space));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  std::string_view rest = header.substr(space + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  return scheme == "bearer" && rest == token;
}

}  // namespace

struct ApiServer::Impl {
  Impl(Store& s, Options o) : store(s), options(std::move(o)) {}

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
                                  const ParsedTarget& target, const ResourcePath& path);
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

namespace {

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

}  // namespace

asio::awaitable<void> ApiServer::Impl::AcceptLoop() {
  for (;;) {
    beast::error_code ec;
    tcp::socket socket(asio::make_strand(*ioc));
    co_await acceptor->async_accept(socket, Redirect(ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
      co_await pause.async_wait(Redirect(ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    if (tls) {
      asio::co_spawn(executor, ServeTls(std::move(socket)), LogEscapedException);
    } else {
      asio::co_spawn(executor, ServePlain(std::move(socket)), LogEscapedException);
    }
  }
}

asio::awaitable<void> ApiServer::Impl::ServeTls(tcp::socket socket) {
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(kHandshakeTimeout);
  co_await stream.async_handshake(ssl::stream_base::server, Redirect(ec));
  if (ec) co_return;
  co_await Serve(stream);
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(1));
  co_await stream.async_shutdown(Redirect(ec));
  beast::get_lowest_layer(stream).socket().close(ec);
}

asio::awaitable<void> ApiServer::Impl::ServePlain(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  co_await Serve(stream);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream.socket().close(ec);
}

template <class Stream>
asio::awaitable<void> ApiServer::Impl::Serve(Stream& stream) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxRequestBody);
    parser.header_limit(64 * 1024);
    beast::get_lowest_layer(stream).expires_after(kIdleTimeout);
    beast::error_code ec;
    co_await http::async_read(stream, buffer, parser, Redirect(ec));
    if (ec) {
      if (ec == http::error::body_limit) {
        (void)co_await WriteResponse(
            stream, 11, false,
            ErrorResponse(ApiError{413, "RequestEntityTooLarge", "Request entity too large",
                                   Json::object()}));
      } else if (ec.category() == http::make_error_code(http::error::need_more).category() &&
                 ec != http::error::end_of_stream && ec != http::error::partial_message) {
        (void)co_await WriteResponse(stream, 11, false,
                                     ErrorResponse(BadRequest("malformed HTTP request")));
      }
      co_return;
    }
    http::request<http::string_body> req = parser.release();
    if (!co_await Dispatch(stream, req)) co_return;
  }
}

template <class Stream>
asio::awaitable<bool> ApiServer::Impl::Dispatch(Stream& stream,
                                                http::request<http::string_body>& req) {
  const unsigned version = req.version();
  const bool keep_alive = req.keep_alive();
  ApiRequest request{std::string(req.method_string()), std::string(req.target()),
                     std::string(req[http::field::content_type]), std::move(req.body())};
  const ParsedTarget target = ParseTarget(request.target);
  if (!Authorized(req[http::field::authorization], options.token)) {
    co_return co_await WriteResponse(stream, version, keep_alive,
                                     ErrorResponse(UnauthorizedError()));
  }
  if (target.path.rfind("/debug/fakekube/", 0) == 0) {
    co_return co_await WriteResponse(stream, version, keep_alive, Control(request, target));
  }
  if (std::optional<ApiResponse> fault = faults.Next()) {
    co_return co_await WriteResponse(stream, version, keep_alive, std::move(*fault));
  }
  if (auto doc = DiscoveryDocument(target.path, "127.0.0.1:" + std::to_string(port.load()))) {
    if (request.method != "GET") {
      co_return co_await WriteResponse(stream, version, keep_alive,
                                       ErrorResponse(MethodNotAllowedError()));
    }
    co_return co_await WriteResponse(stream, version, keep_alive, JsonResponse(200, *doc));
  }
  if (target.path == "/healthz" || target.path == "/livez" || target.path == "/readyz") {
    co_return co_await WriteResponse(stream, version, keep_alive,
                                     ApiResponse{200, "text/plain; charset=utf-8", "ok", {}});
  }
  std::optional<ResourcePath> path = ParseResourcePath(target);
  if (!path) {
    co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(PathNotFound()));
  }
  if (request.method == "GET" && IsWatch(target, *path)) {
    auto plan = PlanWatch(target, *path, options.default_watch_timeout);
    if (!plan.ok()) {
      co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(plan.error));
    }
    co_return co_await Watch(stream, version, keep_alive, *plan.value, *path->resource);
  }
  if (path->subresource == "log" && request.method == "GET" && QueryBool(target, "follow")) {
    co_return co_await FollowLog(stream, version, keep_alive, target, *path);
  }
  if (path->subresource == "proxy") {
    ApiResponse response = ErrorResponse(MethodNotAllowedError());
    if (request.method == "GET" || request.method == "POST") {
      ProxyTarget resolve;
      {
        std::lock_guard<std::mutex> lock(control_mu);
        resolve = proxy_target;
      }
      ProxiedRequest proxied{request.method, request.body, {}};
      for (const auto& field : req) {
        proxied.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      response = co_await Proxy(store, resolve, proxied, target, *path);
    }
    co_return co_await WriteResponse(stream, version, keep_alive, std::move(response));
  }
  co_return co_await WriteResponse(stream, version, keep_alive,
                                   HandleResourceRequest(store, request, target, *path));
}

template <class Stream>
asio::awaitable<bool> ApiServer::Impl::Watch(Stream& stream, unsigned version, bool keep_alive,
                                             const WatchPlan& plan, const ResourceInfo& resource) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  auto queue = std::make_shared<WatchQueue>();
  queue->executor = executor;
  queue->timer = &timer;
  const uint64_t subscription =
      store.Subscribe([queue, name = resource.name](const WatchEvent& event) {
        std::lock_guard<std::mutex> lock(queue->mu);
        if (queue->closed) return;
        queue->last_seen_rv = std::max(queue->last_seen_rv, event.resource_version);
        if (event.resource != name) return;
        queue->events.push_back(event);
        queue->Wake();
      });
  {
    std::lock_guard<std::mutex> lock(watches_mu);
    watches.insert(queue);
  }
  // Ends the subscription however the coroutine ends (even destroyed by Stop()).
  struct Registration {
    Impl& impl;
    std::shared_ptr<WatchQueue> queue;
    uint64_t subscription;
    ~Registration() {
      queue->Close();
      impl.store.Unsubscribe(subscription);
      std::lock_guard<std::mutex> lock(impl.watches_mu);
      impl.watches.erase(queue);
    }
  } registration{*this, queue, subscription};

  std::vector<std::string> initial;
  uint64_t delivered = 0;
  if (!plan.since) {
    auto list = store.List(resource.name, plan.ns, "", "");
    if (!list.ok())
      co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(list.error));
    for (Json& item : list.value->items) {
      if (plan.filter->Matches(item)) initial.push_back(plan.filter->AddedLine(std::move(item)));
    }
    delivered = list.value->resource_version;
  } else {
    auto events = store.EventsSince(resource.name, *plan.since);
    if (!events.ok()) {
      // Too old: one in-band ERROR event, then the end (cacher newErrWatcher).
      // (No co_await inside && or ?: : GCC 12 miscompiles them.)
      if (!co_await WriteChunkedHeader(stream, version, keep_alive, "application/json")) {
        co_return false;
      }
      if (!co_await WriteChunk(stream, ErrorLine(events.error))) co_return false;
      const bool ended = co_await WriteLastChunk(stream);
      co_return ended&& keep_alive;
    }
    delivered = *plan.since;
    for (const WatchEvent& event : *events.value) {
      if (auto line = plan.filter->Translate(event)) initial.push_back(std::move(*line));
      delivered = std::max(delivered, event.resource_version);
    }
  }
  if (!co_await WriteChunkedHeader(stream, version, keep_alive, "application/json")) {
    co_return false;
  }
  for (const std::string& line : initial) {
    if (!co_await WriteChunk(stream, line)) co_return false;
  }
  const auto deadline = Clock::now() + plan.timeout;
  auto next_bookmark = Clock::now() + options.bookmark_interval;
  for (;;) {
    std::deque<WatchEvent> batch;
    uint64_t seen;
    bool cut;
    {
      std::lock_guard<std::mutex> lock(queue->mu);
      batch.swap(queue->events);
      seen = queue->last_seen_rv;
      cut = queue->cut;
    }
    if (cut) {  // as a restart or a broken network cuts it: no last chunk
      beast::error_code ec;
      beast::get_lowest_layer(stream).socket().close(ec);
      co_return false;
    }
    for (const WatchEvent& event : batch) {
      if (event.resource_version <= delivered) continue;  // already replayed or listed
      delivered = event.resource_version;
      if (auto line = plan.filter->Translate(event)) {
        if (!co_await WriteChunk(stream, *line)) co_return false;
      }
    }
    const auto now = Clock::now();
    const uint64_t bookmark_rv = std::max(delivered, seen);
    if (now >= deadline) {
      if (plan.bookmarks) {
        if (!co_await WriteChunk(stream, plan.filter->BookmarkLine(bookmark_rv))) co_return false;
      }
      break;
    }
    if (plan.bookmarks && now >= next_bookmark) {
      if (!co_await WriteChunk(stream, plan.filter->BookmarkLine(bookmark_rv))) co_return false;
      next_bookmark = now + options.bookmark_interval;
    }
    timer.expires_at(plan.bookmarks ? std::min(deadline, next_bookmark) : deadline);
    {
      std::lock_guard<std::mutex> lock(queue->mu);
      if (!queue->events.empty()) continue;
    }
    beast::error_code ec;
    co_await timer.async_wait(Redirect(ec));  // cancelled by Wake()
  }
  const bool ended = co_await WriteLastChunk(stream);
  co_return ended&& keep_alive;
}

template <class Stream>
asio::awaitable<bool> ApiServer::Impl::FollowLog(Stream& stream, unsigned version, bool keep_alive,
                                                 const ParsedTarget& target,
                                                 const ResourcePath& path) {
  LogOptions options;
  options.container = QueryString(target, "container");
  options.tail_lines = QueryInt(target, "tailLines");
  options.limit_bytes = QueryInt(target, "limitBytes");
  options.follow = true;
  auto pod = PodForLog(store, path.ns, path.name, options);
  if (!pod.ok()) {
    co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(pod.error));
  }
  const std::string uid = (*pod.value)["metadata"].value("uid", "");
  std::optional<size_t> budget;
  if (options.limit_bytes && *options.limit_bytes >= 0) budget = *options.limit_bytes;
  auto send = [&](std::string text) -> asio::awaitable<bool> {
    if (budget) {
      if (text.size() > *budget) text.resize(*budget);
      *budget -= text.size();
    }
    co_return co_await WriteChunk(stream, text);
  };
  if (!co_await WriteChunkedHeader(stream, version, keep_alive, "text/plain")) co_return false;
  std::string log = store.Log(uid);
  size_t offset = log.size();
  if (!co_await send(TailLines(log, options.tail_lines))) co_return false;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    auto current = store.Get("pods", path.ns, path.name);
    const bool over = !current.ok() || (*current.value)["metadata"].value("uid", "") != uid ||
                      LogFinished(*current.value, options.container);
    log = store.Log(uid);
    if (log.size() > offset) {
      if (!co_await send(log.substr(offset))) co_return false;
      offset = log.size();
    }
    if (over || (budget && *budget == 0)) break;
    timer.expires_after(kLogPollInterval);
    beast::error_code ec;
    co_await timer.async_wait(Redirect(ec));
  }
  const bool ended = co_await WriteLastChunk(stream);
  co_return ended&& keep_alive;
}

ApiServer::ApiServer(Store& store, Options options)
    : impl_(std::make_unique<Impl>(store, std::move(options))) {}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Start() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  EDL_CHECK(!s.started && !s.stopped) << "ApiServer started twice";
  if (s.options.tls) {
    std::vector<std::string> names;
    if (s.options.host != "127.0.0.1" && s.options.host != "localhost") {
      names.push_back(s.options.host);
    }
    EDL_ASSIGN_OR_RETURN(s.certs, GenerateServerCertificates(names));
    if (!s.options.cert_dir.empty()) {
      EDL_RETURN_IF_ERROR(WriteCertificates(s.certs, s.options.cert_dir));
    }
    s.tls = std::make_unique<ssl::context>(ssl::context::tls_server);
    beast::error_code ec;
    s.tls->use_certificate_chain(asio::buffer(s.certs.server_cert_pem), ec);
    if (!ec) s.tls->use_private_key(asio::buffer(s.certs.server_key_pem), ssl::context::pem, ec);
    if (ec) return Internal("fake kube api server: loading its certificate: " + ec.message());
  }
  EDL_RETURN_IF_ERROR(s.ListenLocked(s.options.port));
  s.started = true;
  return Status::Ok();
}

Status ApiServer::Impl::ListenLocked(int listen_port) {
  const std::string name = options.host + ":" + std::to_string(listen_port);
  auto context = std::make_unique<asio::io_context>(4);
  beast::error_code ec;
  tcp::endpoint endpoint;
  asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, static_cast<uint16_t>(listen_port));
  } else {
    tcp::resolver resolver(*context);
    auto results = resolver.resolve(options.host, std::to_string(listen_port), ec);
    if (ec || results.empty()) return Unavailable(name + ": cannot resolve host: " + ec.message());
    endpoint = results.begin()->endpoint();
  }
  auto listener = std::make_unique<tcp::acceptor>(asio::make_strand(*context));
  if (listener->open(endpoint.protocol(), ec); ec) {
    return Unavailable(name + ": cannot open a socket: " + ec.message());
  }
  listener->set_option(asio::socket_base::reuse_address(true), ec);
  if (listener->bind(endpoint, ec); ec) return Unavailable(name + ": cannot bind: " + ec.message());
  if (listener->listen(asio::socket_base::max_listen_connections, ec); ec) {
    return Unavailable(name + ": cannot listen: " + ec.message());
  }
  port = listener->local_endpoint(ec).port();
  ioc = std::move(context);
  acceptor = std::move(listener);
  asio::co_spawn(acceptor->get_executor(), AcceptLoop(), LogEscapedException);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([context = ioc.get()] {
      for (;;) {
        try {
          context->run();
          return;
        } catch (const std::exception& e) {
          EDL_LOG(WARNING) << "fake kube api server: handler threw: " << e.what();
        }
      }
    });
  }
  return Status::Ok();
}

void ApiServer::Impl::HaltLocked() {
  if (!ioc) return;
  {
    // No watch may post to the io_context once it starts going away.
    std::lock_guard<std::mutex> lock(watches_mu);
    for (const auto& queue : watches) queue->Close();
  }
  ioc->stop();
  for (std::thread& t : threads) t.join();
  threads.clear();
  acceptor.reset();
  ioc.reset();  // destroys the suspended connection coroutines, closing their sockets
}

int ApiServer::port() const { return impl_->port.load(); }

void ApiServer::Stop() {
  Impl& s = *impl_;
  s.stopping = true;  // no restart begins after this
  std::thread restarter;
  {
    std::lock_guard<std::mutex> lock(s.control_mu);
    restarter = std::move(s.restarter);
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.started && !s.stopped) s.HaltLocked();
    s.stopped = true;
  }
  s.stopped_cv.notify_all();
  if (restarter.joinable()) restarter.join();
}

Status ApiServer::Impl::RestartLocked(std::unique_lock<std::mutex>& lock,
                                      std::chrono::milliseconds down) {
  if (stopped) return FailedPrecondition("the fake kube api server was stopped");
  EDL_LOG(INFO) << "fake kube api server: restarting; down for " << down.count() << " ms";
  HaltLocked();
  if (stopped_cv.wait_for(lock, down, [&] { return stopped; })) {
    return FailedPrecondition("the fake kube api server was stopped");
  }
  EDL_RETURN_IF_ERROR(ListenLocked(port.load()));
  ++restarts;
  EDL_LOG(INFO) << "fake kube api server: serving again on port " << port.load();
  return Status::Ok();
}

Status ApiServer::Restart(std::chrono::milliseconds down) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  EDL_CHECK(impl_->started) << "ApiServer::Restart before Start";
  return impl_->RestartLocked(lock, down);
}

size_t ApiServer::Impl::CutWatches() {
  std::lock_guard<std::mutex> lock(watches_mu);
  for (const auto& queue : watches) {
    std::lock_guard<std::mutex> queue_lock(queue->mu);
    queue->cut = true;
    queue->Wake();
  }
  EDL_LOG(INFO) << "fake kube api server: cutting " << watches.size() << " watch(es)";
  return watches.size();
}

size_t ApiServer::CutWatches() { return impl_->CutWatches(); }

void ApiServer::InjectFaults(const FaultPlan& plan) { impl_->faults.Set(plan); }

int64_t ApiServer::restarts() const { return impl_->restarts.load(); }

int64_t ApiServer::faults_injected() const { return impl_->faults.injected(); }

std::string ApiServer::Kubeconfig() const {
  const Impl& s = *impl_;
  const std::string host = s.options.host == "0.0.0.0" ? "127.0.0.1" : s.options.host;
  const std::string server = std::string(s.options.tls ? "https" : "http") + "://" + host + ":" +
                             std::to_string(s.port.load());
  return KubeconfigYaml(server, s.options.tls ? s.certs.ca_cert_pem : "", s.options.token);
}

size_t ApiServer::open_watches() const {
  std::lock_guard<std::mutex> lock(impl_->watches_mu);
  return impl_->watches.size();
}

ApiResponse ApiServer::Impl::Control(const ApiRequest& request, const ParsedTarget& target) {
  const std::string what = target.path.substr(std::string("/debug/fakekube/").size());
  if (what == "state" && request.method == "GET") {
    std::lock_guard<std::mutex> lock(control_mu);
    return JsonResponse(200, Json{{"restarts", restarts.load()},
                                  {"restarting", restarting},
                                  {"faults_injected", faults.injected()},
                                  {"watches", watches_count()}});
  }
  if (request.method != "POST") return ErrorResponse(MethodNotAllowedError());
  if (what == "faults") {
    ApiResult<FaultPlan> plan = ParseFaultPlan(target);
    if (!plan.ok()) return ErrorResponse(plan.error);
    faults.Set(*plan.value);
    return JsonResponse(200, Json{{"code", plan.value->code}});
  }
  if (what == "cut-watches") return JsonResponse(200, Json{{"cut", CutWatches()}});
  if (what == "restart") {
    const std::chrono::milliseconds down(QueryInt(target, "down_ms").value_or(1000));
    std::lock_guard<std::mutex> lock(control_mu);
    if (restarting || stopping) {
      return ErrorResponse(ConflictError("restarts", "api", "a restart is under way"));
    }
    restarting = true;
    // This handler runs on a thread the restart joins: a thread of its
    // own does it, once this answer had a moment to leave.
    if (restarter.joinable()) restarter.join();
    restarter = std::thread([this, down] {
      {
        std::unique_lock<std::mutex> pause(mu);
        if (!stopped_cv.wait_for(pause, std::chrono::milliseconds(200), [&] { return stopped; })) {
          Status restarted = RestartLocked(pause, down);
          if (!restarted.ok()) {
            EDL_LOG(ERROR) << "fake kube api server: restart: " << restarted.message();
          }
        }
      }
      std::lock_guard<std::mutex> lock(control_mu);
      restarting = false;
    });
    return JsonResponse(202, Json{{"down_ms", down.count()}});
  }
  return ErrorResponse(PathNotFound());
}

std::string ApiServer::CaCertificatePem() const { return impl_->certs.ca_cert_pem; }

void ApiServer::SetProxyTarget(ProxyTarget target) {
  std::lock_guard<std::mutex> lock(impl_->control_mu);
  impl_->proxy_target = std::move(target);
}

}  // namespace edl::fakekube
