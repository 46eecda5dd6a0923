// A deliberately plain HTTP/1.1 client for the fake API server's tests:
// one request per connection (or several on one keep-alive connection),
// HTTPS verified against the server's CA, and a watch reader that hands
// out the stream's lines as they arrive. Every blocking read gives up after
// 20 s so a broken server fails a test instead of hanging it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube::testing {

struct HttpResult {
  int status = 0;  // 0: no response (connection failed)
  std::string content_type;
  std::string transfer_encoding;
  std::string body;
  Json json() const { return Json::parse(body, nullptr, false); }
};

struct ClientOptions {
  int port = 0;
  bool tls = true;
  std::string ca_pem;         // trusted CA for TLS
  std::string authorization;  // the whole Authorization header; "" = none
};

// A connection; requests on it are sent one after the other (keep-alive).
class ApiTestClient {
 public:
  explicit ApiTestClient(ClientOptions options);
  ~ApiTestClient();
  bool connected() const;
  HttpResult Send(const std::string& method, const std::string& target,
                  const std::string& body = "",
                  const std::string& content_type = "application/json");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One request per call on a fresh connection.
HttpResult Request(const ClientOptions& options, const std::string& method,
                   const std::string& target, const std::string& body = "",
                   const std::string& content_type = "application/json");

// A GET whose body is read line by line on a background thread.
class StreamReader {
 public:
  StreamReader(const ClientOptions& options, const std::string& target);
  ~StreamReader();  // closes the connection and joins the reader
  // The response status once the header arrived (0 = not yet/never).
  int status() const;
  std::string content_type() const;
  // The next complete line (without '\n'), or nullopt if none arrived
  // within `timeout` or the stream ended.
  std::optional<std::string> NextLine(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Waits until the server ends the body; false if not within `timeout`.
  bool WaitForEnd(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  bool ended() const;
  // Whether the body ended as HTTP says it should (the last chunk came).
  bool ended_cleanly() const;
  // Everything received so far.
  std::string body() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace edl::fakekube::testing
