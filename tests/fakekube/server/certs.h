// A throwaway PKI for the fake API server: a CA (key + self-signed cert) and
// a server certificate signed by it for 127.0.0.1 and localhost (plus any
// extra names), generated in memory with OpenSSL 3. Keys are ECDSA P-256.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace edl::fakekube {

struct ServerCertificates {
  std::string ca_cert_pem;
  std::string ca_key_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
};

// `extra_names` are added as subjectAltNames: IP addresses as IP SANs,
// anything else as DNS SANs. Internal on an OpenSSL failure.
Result<ServerCertificates> GenerateServerCertificates(
    const std::vector<std::string>& extra_names = {});

// Writes ca.crt, server.crt and server.key (mode 0600) into `dir`, which is
// created if missing. IoError naming the file on failure.
Status WriteCertificates(const ServerCertificates& certs, const std::string& dir);

}  // namespace edl::fakekube
