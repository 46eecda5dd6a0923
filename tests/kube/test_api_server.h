// TestApiServer: a tiny HTTP/1.1 server on 127.0.0.1 for the kube client
// tests, plain or TLS (OpenSSL C API, optionally requiring a client
// certificate). Each request is handed to the test's handler together with
// the connection, so a test can answer canned responses, split a body into
// odd chunks, hang, or close mid-stream. Records every request it saw, and
// per TLS connection the SNI and ALPN protocols the client offered.
//
// One thread per connection; the handler runs on it. Stop() (or the
// destructor) shuts every connection down and joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/kube/test_pki.h"

namespace edl::kube::testing {

struct SeenRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string sni;                             // TLS server name the client sent, "" if none
  std::string alpn_offered;                    // e.g. "http/1.1", comma-separated
  std::string client_cert_cn;                  // CN of a verified client certificate
  int connection = 0;                          // which connection (1, 2, ...) carried it
  std::string Header(const std::string& lowercase_name) const;
  // The value of query parameter `key` in target ("" if absent).
  std::string Query(const std::string& key) const;
  std::string Path() const { return target.substr(0, target.find('?')); }
};

class ServerConnection {
 public:
  virtual ~ServerConnection() = default;
  virtual bool Write(std::string_view bytes) = 0;
  // Closes the connection after the handler returns.
  virtual void Close() = 0;
  // Blocks until the server stops (a hung server); true if it stopped before
  // `timeout`.
  virtual bool Hang(std::chrono::milliseconds timeout) = 0;

  // A complete response with Content-Length.
  void Reply(int code, const std::string& body,
             const std::vector<std::pair<std::string, std::string>>& headers = {},
             const std::string& content_type = "application/json");
  void StartChunked(int code, const std::string& content_type = "application/json");
  void Chunk(std::string_view data);
  void EndChunked();
};

class TestApiServer {
 public:
  using Handler = std::function<void(const SeenRequest&, ServerConnection&)>;
  struct Tls {
    CertAndKey server;
    std::string client_ca_pem;  // non-empty: require a client certificate
  };

  explicit TestApiServer(Handler handler, std::optional<Tls> tls = std::nullopt);
  ~TestApiServer();
  TestApiServer(const TestApiServer&) = delete;
  TestApiServer& operator=(const TestApiServer&) = delete;

  int port() const { return port_; }
  // "https://127.0.0.1:PORT" or "http://...".
  std::string url() const;
  std::vector<SeenRequest> requests() const;
  // Waits until at least n requests arrived; false after `timeout`.
  bool WaitForRequests(size_t n,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  int connections_accepted() const;
  int failed_handshakes() const;
  void Stop();

 private:
  class Conn;
  void AcceptLoop();
  void Serve(int fd, int id);

  Handler handler_;
  void* ssl_ctx_ = nullptr;  // SSL_CTX*
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;

  mutable std::mutex mu_;  // guards everything below
  mutable std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::vector<int> open_fds_;
  std::vector<SeenRequest> requests_;
  int accepted_ = 0;
  int failed_handshakes_ = 0;
};

// Polls `condition` until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));

// A fresh directory under /tmp, removed with its files by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  // Writes `contents` to path()/name and returns the full path.
  std::string Write(const std::string& name, const std::string& contents) const;

 private:
  std::string path_;
};

}  // namespace edl::kube::testing
