// PostgresServer: a real PostgreSQL server of the test's own, from Debian's
// postgresql package: initdb into a temporary directory (as the unprivileged
// user "postgres" when the test runs as root, since the server refuses
// root), started on a free loopback port with password (SCRAM) authentication
// over TCP, stopped and removed at scope exit. Tests reach it with psql
// (an independent writer of their tables) and with URLs edl reads.
#pragma once

#include <string>

namespace edl::testing {

class PostgresServer {
 public:
  // Where the server binaries are (initdb, postgres, pg_ctl), or "" when
  // the postgresql package is not installed.
  static std::string BinDir();

  // Starts the server; check ok() (error() says why not). With `tls` it
  // also serves TLS with a certificate for 127.0.0.1 signed by a CA of its
  // own (ca_file()), made with the openssl tool.
  explicit PostgresServer(bool tls = false);
  ~PostgresServer();
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  int port() const { return port_; }
  // A passfile holding the superuser's password (libpq's passfile=).
  const std::string& passfile() const { return passfile_; }
  // With tls: the CA certificate that signed the server's, and another CA's
  // (for a client that must refuse the server).
  std::string ca_file() const { return dir_ + "/ca.crt"; }
  std::string other_ca_file() const { return dir_ + "/other-ca.crt"; }
  // postgresql://postgres@127.0.0.1:PORT/postgres?passfile=...&PARAMS
  std::string Url(const std::string& params) const;

  // Runs `sql` with psql (ON_ERROR_STOP); its stdout, or "ERROR: ..." with
  // psql's output when it fails.
  std::string Psql(const std::string& sql) const;

  // Stops the server (fast shutdown) and starts it again on the same port
  // and data; false when it does not come back.
  bool Restart();
  bool Stop();
  bool Start();

 private:
  std::string dir_;
  std::string passfile_;
  std::string as_user_;  // "runuser -u postgres -- " when root
  bool tls_ = false;
  int port_ = 0;
  std::string error_;
};

}  // namespace edl::testing
