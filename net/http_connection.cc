// HttpConnection over Boost.Beast: each blocking step runs the connection's
// own io_context until the step's async operation completes, and
// beast::tcp_stream's expiry bounds every step by its deadline.
#include "net/http_connection.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <strings.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <limits>
#include <optional>
#include <sstream>

#include "net/http_beast_impl.h"

namespace edl::net {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class TlsContext {
 public:
  ssl::context ctx{ssl::context::tls_client};
};

namespace {

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

}  // namespace

std::string HttpHead::Header(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (strcasecmp(n.c_str(), name.c_str()) == 0) return v;
  }
  return "";
}

Result<std::shared_ptr<TlsContext>> MakeTlsContext(const std::string& ca_pem, bool insecure,
                                                   const std::string& cert_pem,
                                                   const std::string& key_pem) {
  auto t = std::make_shared<TlsContext>();
  beast::error_code ec;
  t->ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                     ec);
  if (insecure) {
    t->ctx.set_verify_mode(ssl::verify_none, ec);
  } else {
    t->ctx.set_verify_mode(ssl::verify_peer, ec);
    if (ca_pem.empty()) {
      t->ctx.set_default_verify_paths(ec);
      if (ec) return Internal("cannot load system CA roots: " + ec.message());
    } else {
      if (ca_pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
        return InvalidArgument("the CA bundle holds no PEM certificate");
      }
      t->ctx.add_certificate_authority(asio::buffer(ca_pem), ec);
      if (ec) {
        return InvalidArgument("the CA bundle is not valid PEM: " + ec.message());
      }
    }
  }
  if (!cert_pem.empty()) {
    t->ctx.use_certificate_chain(asio::buffer(cert_pem), ec);
    if (ec) {
      return InvalidArgument("the client certificate is not valid PEM: " + ec.message());
    }
    t->ctx.use_private_key(asio::buffer(key_pem), ssl::context::pem, ec);
    if (ec) {
      return InvalidArgument("the client key is not valid PEM: " + ec.message());
    }
  }
  static const unsigned char kAlpn[] = "\x08http/1.1";
  if (SSL_CTX_set_alpn_protos(t->ctx.native_handle(), kAlpn, sizeof(kAlpn) - 1) != 0) {
    return Internal("cannot set ALPN: " + OpenSslError());
  }
  return t;
}

struct HttpConnection::Impl {
  Impl(std::shared_ptr<TlsContext> c, std::string p, std::string agent)
      : context(std::move(c)), peer(std::move(p)), user_agent(std::move(agent)) {}

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  // Starts `op(stream, handler)` and runs the io_context until it completes.
  template <typename Op>
  beast::error_code Run(Op&& op) {
    beast::error_code result;
    bool done = false;
    auto handler = [&](beast::error_code ec, auto&&...) {
      result = ec;
      done = true;
    };
    if (tls) {
      op(*tls, handler);
    } else {
      op(*plain, handler);
    }
    ioc.restart();
    ioc.run();
    EDL_CHECK(done) << "http connection operation did not complete";
    return result;
  }

  void Expire(TimePoint deadline) {
    if (deadline == kNoDeadline) {
      lowest().expires_never();
    } else {
      lowest().expires_at(deadline);
    }
  }

  Status Failed(const std::string& what, const beast::error_code& ec) {
    broken = true;
    if (cancelled.load()) return Unavailable(peer + ": " + what + ": cancelled");
    if (ec == beast::error::timeout) {
      return DeadlineExceeded(peer + ": " + what + ": deadline exceeded");
    }
    return Unavailable(peer + ": " + what + ": " + ec.message());
  }

  std::shared_ptr<TlsContext> context;
  const std::string peer;
  const std::string user_agent;
  asio::io_context ioc{1};
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  std::optional<http::response_parser<http::buffer_body>> parser;
  std::atomic<bool> cancelled{false};
  bool broken = false;
  bool raw_body_done = false;  // the body was read past the parser
};

HttpConnection::HttpConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpConnection::~HttpConnection() = default;

Result<std::unique_ptr<HttpConnection>> HttpConnection::Connect(const Endpoint& endpoint,
                                                                std::shared_ptr<TlsContext> tls,
                                                                TimePoint deadline) {
  EDL_CHECK(!endpoint.tls || tls != nullptr) << "TLS endpoint without context";
  auto impl = std::make_unique<Impl>(endpoint.tls ? std::move(tls) : nullptr, endpoint.host_header,
                                     endpoint.user_agent);
  Impl& c = *impl;
  tcp::resolver resolver(c.ioc);
  beast::error_code ec;
  tcp::resolver::results_type endpoints;
  bool resolved = false;
  resolver.async_resolve(endpoint.host, endpoint.port,
                         [&](beast::error_code e, tcp::resolver::results_type r) {
                           ec = e;
                           endpoints = std::move(r);
                           resolved = true;
                         });
  c.ioc.restart();
  if (deadline == kNoDeadline) {
    c.ioc.run();
  } else {
    c.ioc.run_until(deadline);
  }
  if (!resolved) {
    resolver.cancel();
    c.ioc.restart();
    c.ioc.run();
    return DeadlineExceeded(c.peer + ": resolving the host: deadline exceeded");
  }
  if (ec) return Unavailable(c.peer + ": cannot resolve host: " + ec.message());

  if (endpoint.tls) {
    c.tls.emplace(c.ioc, c.context->ctx);
  } else {
    c.plain.emplace(c.ioc);
  }
  c.Expire(deadline);
  ec = c.Run([&](auto&, auto handler) { c.lowest().async_connect(endpoints, handler); });
  if (ec) return c.Failed("cannot connect", ec);
  c.lowest().socket().set_option(tcp::no_delay(true), ec);
  c.lowest().socket().set_option(asio::socket_base::keep_alive(true), ec);
  if (endpoint.tls) {
    if (endpoint.send_sni &&
        !SSL_set_tlsext_host_name(c.tls->native_handle(), endpoint.verify_name.c_str())) {
      return Internal(c.peer + ": cannot set TLS SNI: " + OpenSslError());
    }
    c.tls->set_verify_callback(ssl::host_name_verification(endpoint.verify_name), ec);
    ec = c.Run([&](auto& stream, auto handler) {
      using Stream = std::decay_t<decltype(stream)>;
      if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
        stream.async_handshake(ssl::stream_base::client, handler);
      }
    });
    if (ec) {
      std::string what = "TLS handshake failed";
      long verify = SSL_get_verify_result(c.tls->native_handle());
      if (verify != X509_V_OK) {
        what += " (" + std::string(X509_verify_cert_error_string(verify)) +
                "; is certificate-authority right for " + endpoint.verify_name + "?)";
      }
      return c.Failed(what, ec);
    }
  }
  return std::unique_ptr<HttpConnection>(new HttpConnection(std::move(impl)));
}

Status HttpConnection::Send(const std::string& method, const std::string& target,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const std::string& body, TimePoint deadline) {
  Payload payload;
  payload.Borrow(body.data(), body.size(), nullptr);  // Send blocks
  return Send(method, target, headers, payload, deadline);
}

Status HttpConnection::Send(const std::string& method, const std::string& target,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const Payload& body, TimePoint deadline) {
  Impl& c = *impl_;
  if (c.cancelled.load() || c.broken) return Unavailable(c.peer + ": connection closed");
  http::request<http::empty_body> request;
  request.method_string(method);
  request.target(target);
  request.version(11);
  request.set(http::field::host, c.peer);
  request.set(http::field::user_agent, c.user_agent);
  for (const auto& [name, value] : headers) request.set(name, value);
  if (body.size() > 0 || method == "POST" || method == "PUT" || method == "PATCH") {
    request.content_length(body.size());
  }
  std::string header;
  {
    std::ostringstream out;
    out << request.base();
    header = std::move(out).str();
  }
  // The header and the body's pieces in one gather write.
  c.Expire(deadline);
  beast::error_code ec = c.Run([&](auto& stream, auto handler) {
    asio::async_write(stream, internal::GatherBuffers(header, {}, body), internal::LargeTransfers{},
                      handler);
  });
  if (ec) return c.Failed("sending the request", ec);
  c.parser.emplace();
  c.parser->header_limit(64 * 1024);
  c.parser->body_limit(boost::none);
  c.raw_body_done = false;
  return Status::Ok();
}

Result<HttpHead> HttpConnection::ReadHead(TimePoint deadline) {
  Impl& c = *impl_;
  EDL_CHECK(c.parser.has_value()) << "ReadHead before Send";
  c.Expire(deadline);
  beast::error_code ec = c.Run([&](auto& stream, auto handler) {
    http::async_read_header(stream, c.buffer, *c.parser, handler);
  });
  if (ec) return c.Failed("reading the response", ec);
  const auto& message = c.parser->get();
  HttpHead head;
  head.status = static_cast<int>(message.result_int());
  head.keep_alive = message.keep_alive();
  for (const auto& field : message) {
    head.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  return head;
}

Result<size_t> HttpConnection::ReadBody(char* buf, size_t size, TimePoint deadline) {
  Impl& c = *impl_;
  EDL_CHECK(c.parser.has_value() && c.parser->is_header_done()) << "ReadBody before ReadHead";
  EDL_CHECK(size > 0);
  if (c.raw_body_done) return size_t{0};  // ReadWholeBodyBytes read it
  while (!c.parser->is_done()) {
    if (c.cancelled.load()) {
      c.broken = true;
      return Unavailable(c.peer + ": reading the response: cancelled");
    }
    auto& body = c.parser->get().body();
    body.data = buf;
    body.size = size;
    body.more = true;
    c.Expire(deadline);
    // read_some: returns as soon as some body bytes arrived (read would
    // wait for the whole buffer, stalling a watch).
    beast::error_code ec = c.Run([&](auto& stream, auto handler) {
      http::async_read_some(stream, c.buffer, *c.parser, handler);
    });
    if (ec == http::error::need_buffer) ec = {};
    if (ec == ssl::error::stream_truncated && !c.parser->chunked() && !c.parser->content_length()) {
      // A TLS peer that ends a close-delimited body without close_notify.
      beast::error_code eof;
      c.parser->put_eof(eof);
      ec = eof;
      c.broken = true;
    }
    if (ec) return c.Failed("reading the response body", ec);
    size_t got = size - c.parser->get().body().size;
    if (got > 0) return got;
  }
  return size_t{0};
}

Result<std::string> HttpConnection::ReadWholeBody(size_t limit, TimePoint deadline) {
  std::string out;
  char buf[64 * 1024];
  while (true) {
    EDL_ASSIGN_OR_RETURN(size_t n, ReadBody(buf, sizeof(buf), deadline));
    if (n == 0) return out;
    if (out.size() + n > limit) {
      impl_->broken = true;
      return ResourceExhausted(impl_->peer + ": response body larger than " +
                               std::to_string(limit) + " bytes");
    }
    out.append(buf, n);
  }
}

Result<Bytes> HttpConnection::ReadWholeBodyBytes(size_t limit, TimePoint deadline) {
  Impl& c = *impl_;
  EDL_CHECK(c.parser.has_value() && c.parser->is_header_done())
      << "ReadWholeBodyBytes before ReadHead";
  const auto length = c.parser->content_length();
  if (length && (*length > limit || *length > std::numeric_limits<size_t>::max() / 2)) {
    c.broken = true;
    return ResourceExhausted(c.peer + ": response body of " + std::to_string(*length) +
                             " bytes is larger than " + std::to_string(limit) + " bytes");
  }
  // A known length on a plain connection: past the parser, straight into
  // one block (what the parser already buffered first), as the server reads
  // request bodies.
  auto known = c.tls ? std::nullopt : internal::StartKnownLengthBody(*c.parser, c.buffer);
  if (!known) {
    EDL_ASSIGN_OR_RETURN(std::string body, ReadWholeBody(limit, deadline));
    return Bytes::Copy(body);
  }
  if (!known->done()) {
    c.Expire(deadline);
    const auto rest = known->Rest();
    beast::error_code ec = c.Run([&](auto& stream, auto handler) {
      asio::async_read(stream, rest, internal::LargeTransfers{}, handler);
    });
    if (ec) return c.Failed("reading the response body", ec);
    known->Filled(rest.size());  // async_read completes only when it is full
  }
  c.raw_body_done = true;
  return std::move(*known).Take();
}

bool HttpConnection::body_done() const {
  return impl_->raw_body_done || (impl_->parser.has_value() && impl_->parser->is_done());
}

bool HttpConnection::LooksClosed() const {
  Impl& c = *impl_;
  if (c.broken || c.cancelled.load() || c.buffer.size() > 0) return true;
  pollfd p{c.lowest().socket().native_handle(), POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

void HttpConnection::Cancel() {
  Impl* c = impl_.get();
  c->cancelled.store(true);
  asio::post(c->ioc, [c] {
    beast::error_code ec;
    c->lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    c->lowest().socket().close(ec);
  });
}

const TlsContext* HttpConnection::tls() const { return impl_->context.get(); }

const std::string& HttpConnection::peer() const { return impl_->peer; }

}  // namespace edl::net
