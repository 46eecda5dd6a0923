#include "tests/testing/postgres_server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

// A port the kernel hands out as free now.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t n = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

// Runs a shell command; its output (stdout and stderr) and exit status.
int Shell(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  std::array<char, 4096> buf;
  output->clear();
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) output->append(buf.data(), n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char kPassword[] = "edl-test-secret";

}  // namespace

std::string PostgresServer::BinDir() {
  std::error_code ec;
  std::string best;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = e.path().string() + "/bin";
    if (std::filesystem::exists(bin + "/initdb") && bin > best) best = bin;
  }
  return best;
}

PostgresServer::PostgresServer(bool tls) : tls_(tls) {
  const std::string bin = BinDir();
  if (bin.empty()) {
    error_ = "PostgreSQL's server is not installed (Debian: apt-get install postgresql)";
    return;
  }
  char pattern[] = "/tmp/edl-pg-XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    error_ = "cannot create a temporary directory";
    return;
  }
  dir_ = pattern;
  std::string out;
  if (geteuid() == 0) {
    as_user_ = "runuser -u postgres -- ";
    Shell("chown postgres " + dir_, &out);
  }
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
  WriteText(dir_ + "/pw", kPassword);
  Shell("chown postgres " + dir_ + "/pw 2>/dev/null; true", &out);
  passfile_ = dir_ + "/passfile";
  port_ = FreePort();
  WriteText(passfile_, "*:*:*:postgres:" + std::string(kPassword) + "\n");
  std::filesystem::permissions(
      passfile_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  if (Shell(as_user_ + bin + "/initdb -D " + dir_ + "/data -U postgres --pwfile=" + dir_ +
                "/pw --auth-local=trust --auth-host=scram-sha-256 --no-sync -E UTF8",
            &out) != 0) {
    error_ = "initdb failed: " + out;
    return;
  }
  if (tls_) {
    const std::string d = dir_ + "/data";
    const std::string make =
        "cd " + dir_ +
        " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 "
        "-subj /CN=edl-test-ca"
        " && openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.crt "
        "-days 2 -subj /CN=edl-other-ca"
        " && openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
        "-subj /CN=127.0.0.1"
        " && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost' > san.ext"
        " && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
        "-out server.crt -days 2 -extfile san.ext"
        " && cp server.crt server.key " +
        d + "/ && chmod 600 " + d + "/server.key" +
        (as_user_.empty() ? "" : " && chown postgres " + d + "/server.crt " + d + "/server.key");
    if (Shell(make, &out) != 0) {
      error_ = "cannot make the test certificates with openssl: " + out;
      return;
    }
  }
  if (!Start()) error_ = "the server did not start: " + ReadText(dir_ + "/log");
}

PostgresServer::~PostgresServer() {
  if (dir_.empty()) return;
  Stop();
  std::filesystem::remove_all(dir_);
}

std::string PostgresServer::Url(const std::string& params) const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) +
         "/postgres?passfile=" + passfile_ + (params.empty() ? "" : "&" + params);
}

bool PostgresServer::Start() {
  std::string out;
  // -w: pg_ctl returns once the server accepts connections.
  const std::string options =
      "-p " + std::to_string(port_) + " -k " + dir_ +
      " -c listen_addresses=127.0.0.1 -c fsync=off" +
      (tls_ ? " -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key" : "");
  return Shell(as_user_ + BinDir() + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/log -w -t 60 " +
                   "-o '" + options + "' start",
               &out) == 0;
}

bool PostgresServer::Stop() {
  std::string out;
  return Shell(as_user_ + BinDir() + "/pg_ctl -D " + dir_ + "/data -m fast -w stop", &out) == 0;
}

bool PostgresServer::Restart() { return Stop() && Start(); }

std::string PostgresServer::Psql(const std::string& sql) const {
  const std::string file = dir_ + "/statement.sql";
  WriteText(file, "SET client_min_messages = warning;\n" + sql);
  std::string out;
  const int rc =
      Shell("PGPASSFILE=" + passfile_ + " psql -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p " +
                std::to_string(port_) + " -U postgres -d postgres -f " + file,
            &out);
  return rc == 0 ? out : "ERROR: " + out;
}

}  // namespace edl::testing
