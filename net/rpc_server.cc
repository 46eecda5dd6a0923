// RpcServer: a Beast HTTP/1.1 server, one C++20 coroutine per connection,
// `num_threads` threads each running an io_context of its own; accepted
// connections are dealt to them in turn. (One io_context run by several
// threads woke a sleeping thread for nearly every completion: 20-30 % of a
// large RPC went to those wake-ups, docs/performance.md.) Requests are
// answered by HttpRouter (net/http_handling.h); every read and write has a
// deadline (ServerOptions::idle_timeout).
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/logging.h"
#include "net/http_beast_impl.h"
#include "net/http_handling.h"
#include "net/rpc.h"

namespace edl::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// How long a connection closed after an error reply keeps reading (and
// discarding) what the client still sends, so the client sees the reply
// rather than a reset.
constexpr Millis kMaxLinger{5000};

// Counts a connection as open for the lifetime of its coroutine frame (which
// ends either normally or when Stop() destroys the io_context).
class OpenConnection {
 public:
  explicit OpenConnection(std::atomic<size_t>* open) : open_(open) { ++*open_; }
  ~OpenConnection() { --*open_; }
  OpenConnection(const OpenConnection&) = delete;
  OpenConnection& operator=(const OpenConnection&) = delete;

 private:
  std::atomic<size_t>* open_;
};

void LogEscapedException(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    EDL_LOG(WARNING) << "rpc server: connection ended by exception: " << ex.what();
  } catch (...) {
    EDL_LOG(WARNING) << "rpc server: connection ended by an exception";
  }
}

// A reply held by ServerOptions::reply_gate, shared between the connection
// waiting for it and the release, which may come from any thread, after the
// connection or the server is gone.
struct HeldReply {
  using Executor = asio::any_io_executor;
  std::mutex mu;
  bool released = false;
  Status status;
  std::weak_ptr<asio::steady_timer> wake;  // the connection's, while it waits
  // The connection's strand, while the connection lives (a release never
  // keeps a copy: it must not outlive the io_context).
  std::optional<Executor> executor;
};

// Clears HeldReply::executor when the connection's coroutine ends.
class ForgetExecutor {
 public:
  explicit ForgetExecutor(std::shared_ptr<HeldReply> held) : held_(std::move(held)) {}
  ~ForgetExecutor() {
    std::lock_guard<std::mutex> lock(held_->mu);
    held_->executor.reset();
  }
  ForgetExecutor(const ForgetExecutor&) = delete;
  ForgetExecutor& operator=(const ForgetExecutor&) = delete;

 private:
  std::shared_ptr<HeldReply> held_;
};

// Whether the io_context may still be posted to (Stop() clears it before
// destroying the io_context).
struct PostGuard {
  std::mutex mu;
  bool alive = true;
};

}  // namespace

struct RpcServer::Impl {
  explicit Impl(ServerOptions o) : options(std::move(o)), router(options.secret) {}

  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> Serve(tcp::socket socket);

  const ServerOptions options;
  HttpRouter router;  // read-only once started

  std::mutex mu;  // guards started, stopped, iocs, acceptor, threads
  bool started = false;
  bool stopped = false;
  std::vector<std::unique_ptr<asio::io_context>> iocs;  // one per thread
  // Keep each thread's run() going while its io_context has nothing to do.
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  size_t next_ioc = 0;                      // the accept loop's only
  std::unique_ptr<tcp::acceptor> acceptor;  // on its own strand
  std::vector<std::thread> threads;

  // Set when Stop() begins: a handler that finishes after it has its reply
  // dropped and the connection closed, so its caller sees Unavailable, as
  // if the server had gone a moment earlier, never a late success.
  std::atomic<bool> stopping{false};
  std::atomic<int> port{0};
  std::atomic<size_t> accepted{0};
  std::atomic<size_t> open{0};
  std::shared_ptr<PostGuard> post_guard = std::make_shared<PostGuard>();
};

asio::awaitable<void> RpcServer::Impl::AcceptLoop() {
  for (;;) {
    beast::error_code ec;
    asio::io_context& ioc = *iocs[next_ioc++ % iocs.size()];
    tcp::socket socket =
        co_await acceptor->async_accept(ioc, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {  // e.g. out of file descriptors: pause rather than spin
      EDL_LOG(WARNING) << "rpc server on port " << port.load()
                       << ": accept failed: " << ec.message();
      asio::steady_timer pause(co_await asio::this_coro::executor, Millis(50));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    ++accepted;
    auto executor = socket.get_executor();
    asio::co_spawn(executor, Serve(std::move(socket)), LogEscapedException);
  }
}

asio::awaitable<void> RpcServer::Impl::Serve(tcp::socket socket) {
  OpenConnection counted(&open);
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    // One deadline for the whole request: header, then the body read
    // straight into its final string when its length is known.
    stream.expires_after(options.idle_timeout);
    co_await http::async_read_header(stream, buffer, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    std::optional<Bytes> known_body;
    if (!ec) {
      if (auto body = internal::StartKnownLengthBody(parser, buffer)) {
        if (!body->done()) {
          size_t n = co_await asio::async_read(stream, body->Rest(), internal::LargeTransfers{},
                                               asio::redirect_error(asio::use_awaitable, ec));
          body->Filled(n);
        }
        known_body = std::move(*body).Take();
      } else if (!parser.is_done()) {
        co_await http::async_read(stream, buffer, parser,
                                  asio::redirect_error(asio::use_awaitable, ec));
      }
    }
    HttpReply reply;
    unsigned version = 11;
    bool keep_alive = false;
    if (ec) {
      std::optional<HttpReply> error = internal::ReplyForReadError(ec, options.max_body_bytes);
      if (!error) break;  // peer gone, idle, or a socket error
      reply = std::move(*error);
    } else {
      HttpRequest request = internal::FromBeastRequest(parser.release(), std::move(known_body));
      reply = router.Handle(request);
      if (reply.rpc && options.reply_gate) {
        // Wait (without a thread) until the gate releases the reply.
        auto wake = std::make_shared<asio::steady_timer>(stream.get_executor(),
                                                         asio::steady_timer::time_point::max());
        auto held = std::make_shared<HeldReply>();
        held->wake = wake;
        held->executor.emplace(stream.get_executor());
        ForgetExecutor forget(held);
        options.reply_gate([held, guard = post_guard](Status s) {
          std::lock_guard<std::mutex> lock(held->mu);
          if (held->released) return;
          held->released = true;
          held->status = std::move(s);
          std::lock_guard<std::mutex> alive(guard->mu);
          if (!guard->alive || !held->executor) return;
          asio::post(*held->executor, [held] {
            if (auto w = held->wake.lock()) w->cancel();
          });
        });
        Status released;
        for (;;) {
          {
            std::lock_guard<std::mutex> lock(held->mu);
            if (held->released) {
              released = held->status;
              break;
            }
          }
          beast::error_code wait_ec;
          co_await wake->async_wait(asio::redirect_error(asio::use_awaitable, wait_ec));
        }
        if (!released.ok()) reply = ErrorReply(released);
      }
      if (stopping.load()) break;
      version = request.version;
      keep_alive = request.keep_alive && !reply.close;
    }
    // Header, body and payload pieces (tensor storage, borrowed) in one
    // gather write.
    const std::string header = HttpReplyHeader(reply, version, keep_alive);
    stream.expires_after(options.idle_timeout);
    co_await asio::async_write(stream, internal::GatherBuffers(header, reply.body, reply.payload),
                               internal::LargeTransfers{},
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    if (!keep_alive) {
      // Lingering close: stop sending, then drain until the client closes.
      stream.socket().shutdown(tcp::socket::shutdown_send, ec);
      stream.expires_after(std::min(options.idle_timeout, kMaxLinger));
      char sink[16384];
      for (;;) {
        co_await stream.async_read_some(asio::buffer(sink),
                                        asio::redirect_error(asio::use_awaitable, ec));
        if (ec) break;
      }
      break;
    }
  }
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream.socket().close(ec);
}

RpcServer::RpcServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  EDL_CHECK(impl_->options.num_threads > 0) << "num_threads must be positive";
}

RpcServer::~RpcServer() { Stop(); }

void RpcServer::HandleRpc(const std::string& path, RpcHandler handler) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  EDL_CHECK(!impl_->started) << "HandleRpc(" << path << ") after Start()";
  impl_->router.AddRpc(path, std::move(handler));
}

void RpcServer::HandleRpcBody(const std::string& path, RpcBodyHandler handler) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  EDL_CHECK(!impl_->started) << "HandleRpcBody(" << path << ") after Start()";
  impl_->router.AddRpc(path, std::move(handler));
}

void RpcServer::HandleGet(const std::string& path, GetHandler handler, bool public_access) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  EDL_CHECK(!impl_->started) << "HandleGet(" << path << ") after Start()";
  impl_->router.AddGet(path, std::move(handler), public_access);
}

Status RpcServer::Start() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  EDL_CHECK(!s.started && !s.stopped) << "RpcServer started twice";
  const std::string name = s.options.host + ":" + std::to_string(s.options.port);
  std::vector<std::unique_ptr<asio::io_context>> iocs;
  for (int i = 0; i < s.options.num_threads; ++i)
    iocs.push_back(std::make_unique<asio::io_context>(1));
  asio::io_context* ioc = iocs[0].get();
  beast::error_code ec;
  tcp::endpoint endpoint;
  asio::ip::address address = asio::ip::make_address(s.options.host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, static_cast<uint16_t>(s.options.port));
  } else {
    tcp::resolver resolver(*ioc);
    auto results = resolver.resolve(s.options.host, std::to_string(s.options.port), ec);
    if (ec || results.empty()) {
      return Unavailable(name + ": cannot resolve host: " + ec.message());
    }
    endpoint = results.begin()->endpoint();
  }
  auto acceptor = std::make_unique<tcp::acceptor>(asio::make_strand(*ioc));
  if (acceptor->open(endpoint.protocol(), ec); ec) {
    return Unavailable(name + ": cannot open a socket: " + ec.message());
  }
  acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (acceptor->bind(endpoint, ec); ec) {
    return Unavailable(name + ": cannot bind: " + ec.message());
  }
  if (acceptor->listen(asio::socket_base::max_listen_connections, ec); ec) {
    return Unavailable(name + ": cannot listen: " + ec.message());
  }
  s.port = acceptor->local_endpoint(ec).port();
  s.iocs = std::move(iocs);
  for (auto& c : s.iocs) s.keep_running.push_back(asio::make_work_guard(*c));
  s.acceptor = std::move(acceptor);
  asio::co_spawn(s.acceptor->get_executor(), s.AcceptLoop(), LogEscapedException);
  for (int i = 0; i < s.options.num_threads; ++i) {
    s.threads.emplace_back([ioc = s.iocs[i].get()] {
      for (;;) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          EDL_LOG(WARNING) << "rpc server: handler threw: " << e.what();
        }
      }
    });
  }
  s.started = true;
  return Status::Ok();
}

int RpcServer::port() const { return impl_->port.load(); }

size_t RpcServer::connections_accepted() const { return impl_->accepted.load(); }

size_t RpcServer::open_connections() const { return impl_->open.load(); }
bool RpcServer::stopping() const { return impl_->stopping.load(); }

void RpcServer::Stop() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.started || s.stopped) return;
  s.stopped = true;
  s.stopping = true;
  {
    std::lock_guard<std::mutex> guard(s.post_guard->mu);
    s.post_guard->alive = false;
  }
  for (auto& ioc : s.iocs) ioc->stop();  // handlers running now finish; nothing new starts
  for (std::thread& t : s.threads) t.join();
  s.threads.clear();
  s.acceptor.reset();
  s.keep_running.clear();
  // Destroying the io_context destroys the suspended connection coroutines,
  // whose streams close their sockets.
  s.iocs.clear();
}

}  // namespace edl::net
