#include "tests/kube/test_api_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/check.h"

namespace edl::kube::testing {
namespace {

const char* ReasonPhrase(int code) {
  switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    default: return "Status";
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

int AlpnSelect(SSL* ssl, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void*) {
  std::string offered;
  for (unsigned int i = 0; i < inlen;) {
    unsigned len = in[i];
    if (!offered.empty()) offered += ",";
    offered.append(reinterpret_cast<const char*>(in + i + 1), len);
    i += 1 + len;
  }
  auto* seen = static_cast<std::string*>(SSL_get_app_data(ssl));
  if (seen != nullptr) *seen = offered;
  static const unsigned char kHttp11[] = "\x08http/1.1";
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kHttp11, sizeof(kHttp11) - 1, in, inlen) ==
      OPENSSL_NPN_NEGOTIATED) {
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

}  // namespace

std::string SeenRequest::Header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? "" : it->second;
}

std::string SeenRequest::Query(const std::string& key) const {
  size_t q = target.find('?');
  if (q == std::string::npos) return "";
  std::string rest = target.substr(q + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t amp = rest.find('&', pos);
    std::string pair = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      return eq == std::string::npos ? "" : Unescape(pair.substr(eq + 1));
    }
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return "";
}

void ServerConnection::Reply(int code, const std::string& body,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             const std::string& content_type) {
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " + ReasonPhrase(code) +
                     "\r\nContent-Type: " + content_type +
                     "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& [n, v] : headers) head += n + ": " + v + "\r\n";
  Write(head + "\r\n" + body);
}

void ServerConnection::StartChunked(int code, const std::string& content_type) {
  Write("HTTP/1.1 " + std::to_string(code) + " " + ReasonPhrase(code) +
        "\r\nContent-Type: " + content_type + "\r\nTransfer-Encoding: chunked\r\n\r\n");
}

void ServerConnection::Chunk(std::string_view data) {
  char size[32];
  snprintf(size, sizeof(size), "%zx\r\n", data.size());
  Write(std::string(size) + std::string(data) + "\r\n");
}

void ServerConnection::EndChunked() { Write("0\r\n\r\n"); }

class TestApiServer::Conn : public ServerConnection {
 public:
  Conn(TestApiServer* server, int fd, SSL* ssl) : server_(server), fd_(fd), ssl_(ssl) {}
  bool Write(std::string_view bytes) override {
    while (!bytes.empty()) {
      int n = ssl_ ? SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()))
                   : static_cast<int>(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL));
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  void Close() override { close_ = true; }
  bool Hang(std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(server_->mu_);
    return server_->cv_.wait_for(lock, timeout, [&] { return server_->stopping_; });
  }
  // Reads one request; false when the peer closed or sent garbage.
  bool ReadRequest(SeenRequest* r) {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    std::string head = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    std::string request_line = head.substr(0, line_end);
    size_t sp1 = request_line.find(' ');
    size_t sp2 = request_line.rfind(' ');
    if (sp1 == std::string::npos || sp2 <= sp1) return false;
    r->method = request_line.substr(0, sp1);
    r->target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string line = head.substr(pos, e - pos);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        r->headers[Lower(line.substr(0, colon))] = value;
      }
      pos = e + 2;
    }
    size_t length = 0;
    if (auto it = r->headers.find("content-length"); it != r->headers.end()) {
      length = std::stoul(it->second);
    }
    while (buffer_.size() < length) {
      if (!Fill()) return false;
    }
    r->body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return true;
  }
  bool close_requested() const { return close_; }

 private:
  bool Fill() {
    char buf[16384];
    int n = ssl_ ? SSL_read(ssl_, buf, sizeof(buf))
                 : static_cast<int>(::recv(fd_, buf, sizeof(buf), 0));
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }

  TestApiServer* server_;
  int fd_;
  SSL* ssl_;
  std::string buffer_;
  bool close_ = false;
};

TestApiServer::TestApiServer(Handler handler, std::optional<Tls> tls)
    : handler_(std::move(handler)) {
  ::signal(SIGPIPE, SIG_IGN);
  if (tls) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    BIO* bio =
        BIO_new_mem_buf(tls->server.cert_pem.data(), static_cast<int>(tls->server.cert_pem.size()));
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    bio = BIO_new_mem_buf(tls->server.key_pem.data(), static_cast<int>(tls->server.key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    EDL_CHECK(cert && key && SSL_CTX_use_certificate(ctx, cert) == 1 &&
              SSL_CTX_use_PrivateKey(ctx, key) == 1);
    X509_free(cert);
    EVP_PKEY_free(key);
    SSL_CTX_set_alpn_select_cb(ctx, AlpnSelect, nullptr);
    if (!tls->client_ca_pem.empty()) {
      bio = BIO_new_mem_buf(tls->client_ca_pem.data(), static_cast<int>(tls->client_ca_pem.size()));
      X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
      BIO_free(bio);
      EDL_CHECK(ca != nullptr);
      X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
      X509_free(ca);
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    ssl_ctx_ = ctx;
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EDL_CHECK(listen_fd_ >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EDL_CHECK(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  EDL_CHECK(::listen(listen_fd_, 64) == 0);
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

TestApiServer::~TestApiServer() {
  Stop();
  if (ssl_ctx_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
}

std::string TestApiServer::url() const {
  return std::string(ssl_ctx_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<SeenRequest> TestApiServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

bool TestApiServer::WaitForRequests(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
}

int TestApiServer::connections_accepted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return accepted_;
}

int TestApiServer::failed_handshakes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_handshakes_;
}

void TestApiServer::AcceptLoop() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) continue;
    int id = ++accepted_;
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd, id] { Serve(fd, id); });
  }
}

void TestApiServer::Serve(int fd, int id) {
  SSL* ssl = nullptr;
  std::string alpn;
  std::string sni, client_cn;
  if (ssl_ctx_ != nullptr) {
    ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
    SSL_set_fd(ssl, fd);
    SSL_set_app_data(ssl, &alpn);
    if (SSL_accept(ssl) != 1) {
      ERR_clear_error();
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++failed_handshakes_;
      }
      SSL_free(ssl);
      ssl = nullptr;
      fd = -fd - 1;  // closed below
    } else {
      const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
      if (name != nullptr) sni = name;
      if (X509* peer = SSL_get1_peer_certificate(ssl)) {
        char cn[256] = {0};
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof(cn));
        client_cn = cn;
        X509_free(peer);
      }
    }
  }
  if (fd >= 0) {
    Conn conn(this, fd, ssl);
    while (true) {
      SeenRequest r;
      if (!conn.ReadRequest(&r)) break;
      r.sni = sni;
      r.alpn_offered = alpn;
      r.client_cert_cn = client_cn;
      r.connection = id;
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(r);
      }
      cv_.notify_all();
      handler_(r, conn);
      if (conn.close_requested()) break;
    }
  } else {
    fd = -fd - 1;
  }
  if (ssl != nullptr) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(open_fds_.begin(), open_fds_.end(), fd);
  if (it != open_fds_.end()) open_fds_.erase(it);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

void TestApiServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "edl-kube-XXXXXX").string();
  EDL_CHECK(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& name, const std::string& contents) const {
  std::string full = path_ + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(full).parent_path());
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out << contents;
  return full;
}

}  // namespace edl::kube::testing
