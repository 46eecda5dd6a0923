// The fake API server's test client (see api_test_client.h).
#include "tests/fakekube/api_test_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <variant>

namespace edl::fakekube::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// A connected plain or TLS stream with 20 s socket timeouts.
struct Connection {
  explicit Connection(const ClientOptions& options)
      : tls_context(ssl::context::tls_client), socket(ioc) {
    beast::error_code ec;
    socket.connect(
        tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(options.port)),
        ec);
    if (ec) return;
    timeval tv{20, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (options.tls) {
      tls_context.add_certificate_authority(asio::buffer(options.ca_pem), ec);
      if (ec) return;
      tls_context.set_verify_mode(ssl::verify_peer);
      tls = std::make_unique<ssl::stream<tcp::socket&>>(socket, tls_context);
      tls->set_verify_callback(ssl::host_name_verification("127.0.0.1"));
      tls->handshake(ssl::stream_base::client, ec);
      if (ec) return;
    }
    ok = true;
  }
  ~Connection() {
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  template <class Message>
  void Write(Message& message, beast::error_code& ec) {
    if (tls) {
      http::write(*tls, message, ec);
    } else {
      http::write(socket, message, ec);
    }
  }
  template <class Parser>
  void Read(Parser& parser, beast::error_code& ec) {
    if (tls) {
      http::read(*tls, buffer, parser, ec);
    } else {
      http::read(socket, buffer, parser, ec);
    }
  }
  template <class Parser>
  void ReadSome(Parser& parser, beast::error_code& ec) {
    if (tls) {
      http::read_some(*tls, buffer, parser, ec);
    } else {
      http::read_some(socket, buffer, parser, ec);
    }
  }
  template <class Parser>
  void ReadHeader(Parser& parser, beast::error_code& ec) {
    if (tls) {
      http::read_header(*tls, buffer, parser, ec);
    } else {
      http::read_header(socket, buffer, parser, ec);
    }
  }

  asio::io_context ioc;
  ssl::context tls_context;
  tcp::socket socket;
  std::unique_ptr<ssl::stream<tcp::socket&>> tls;
  beast::flat_buffer buffer;
  bool ok = false;
};

http::request<http::string_body> MakeRequest(const ClientOptions& options,
                                             const std::string& method, const std::string& target,
                                             const std::string& body,
                                             const std::string& content_type) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, "127.0.0.1:" + std::to_string(options.port));
  req.set(http::field::accept, "application/json");
  if (!options.authorization.empty()) req.set(http::field::authorization, options.authorization);
  if (!body.empty()) req.set(http::field::content_type, content_type);
  req.body() = body;
  req.prepare_payload();
  return req;
}

}  // namespace

struct ApiTestClient::Impl {
  explicit Impl(ClientOptions o) : options(std::move(o)), connection(options) {}
  ClientOptions options;
  Connection connection;
};

ApiTestClient::ApiTestClient(ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
ApiTestClient::~ApiTestClient() = default;
bool ApiTestClient::connected() const { return impl_->connection.ok; }

HttpResult ApiTestClient::Send(const std::string& method, const std::string& target,
                               const std::string& body, const std::string& content_type) {
  HttpResult result;
  if (!impl_->connection.ok) return result;
  auto req = MakeRequest(impl_->options, method, target, body, content_type);
  beast::error_code ec;
  impl_->connection.Write(req, ec);
  if (ec) return result;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  impl_->connection.Read(parser, ec);
  if (ec) return result;
  auto res = parser.release();
  result.status = static_cast<int>(res.result_int());
  result.content_type = std::string(res[http::field::content_type]);
  result.transfer_encoding = std::string(res[http::field::transfer_encoding]);
  result.body = std::move(res.body());
  return result;
}

HttpResult Request(const ClientOptions& options, const std::string& method,
                   const std::string& target, const std::string& body,
                   const std::string& content_type) {
  ApiTestClient client(options);
  return client.Send(method, target, body, content_type);
}

struct StreamReader::Impl {
  explicit Impl(const ClientOptions& options) : connection(options) {}
  Connection connection;
  mutable std::mutex mu;  // guards everything below
  std::condition_variable changed;
  int status = 0;
  std::string content_type;
  std::string body;
  size_t consumed = 0;  // bytes of body handed out as lines
  bool ended = false;
  bool clean = false;
};

StreamReader::StreamReader(const ClientOptions& options, const std::string& target)
    : impl_(std::make_shared<Impl>(options)) {
  if (!impl_->connection.ok) {
    impl_->ended = true;
    return;
  }
  auto req = MakeRequest(options, "GET", target, "", "");
  beast::error_code ec;
  impl_->connection.Write(req, ec);
  if (ec) {
    impl_->ended = true;
    return;
  }
  thread_ = std::thread([impl = impl_] {
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    beast::error_code ec;
    impl->connection.ReadHeader(parser, ec);
    {
      std::lock_guard<std::mutex> lock(impl->mu);
      if (!ec) {
        impl->status = static_cast<int>(parser.get().result_int());
        impl->content_type = std::string(parser.get()[http::field::content_type]);
      }
    }
    impl->changed.notify_all();
    while (!ec && !parser.is_done()) {
      impl->connection.ReadSome(parser, ec);
      std::lock_guard<std::mutex> lock(impl->mu);
      impl->body = parser.get().body();
      impl->changed.notify_all();
    }
    std::lock_guard<std::mutex> lock(impl->mu);
    impl->ended = true;
    impl->clean = !ec && parser.is_done();
    impl->changed.notify_all();
  });
}

StreamReader::~StreamReader() {
  beast::error_code ec;
  impl_->connection.socket.shutdown(tcp::socket::shutdown_both, ec);
  if (thread_.joinable()) thread_.join();
}

int StreamReader::status() const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->changed.wait_for(lock, std::chrono::seconds(20),
                          [&] { return impl_->status != 0 || impl_->ended; });
  return impl_->status;
}

std::string StreamReader::content_type() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->content_type;
}

std::optional<std::string> StreamReader::NextLine(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  auto has_line = [&] { return impl_->body.find('\n', impl_->consumed) != std::string::npos; };
  impl_->changed.wait_for(lock, timeout, [&] { return has_line() || impl_->ended; });
  if (!has_line()) return std::nullopt;
  size_t end = impl_->body.find('\n', impl_->consumed);
  std::string line = impl_->body.substr(impl_->consumed, end - impl_->consumed);
  impl_->consumed = end + 1;
  return line;
}

bool StreamReader::WaitForEnd(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->changed.wait_for(lock, timeout, [&] { return impl_->ended; });
}

bool StreamReader::ended() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->ended;
}

bool StreamReader::ended_cleanly() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->clean;
}

std::string StreamReader::body() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->body;
}

}  // namespace edl::fakekube::testing
