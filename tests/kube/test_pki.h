// Throwaway certificates for the kube tests, made with the OpenSSL C API: a
// CA and certificates it issues with IP/DNS subject alternative names.
#pragma once

#include <string>
#include <vector>

namespace edl::kube::testing {

struct CertAndKey {
  std::string cert_pem, key_pem;
};

// A self-signed CA (EC P-256, valid from an hour ago for a day).
CertAndKey MakeCa(const std::string& common_name);
// A leaf certificate signed by `ca` with the given SANs; `client` sets the
// clientAuth extended key usage instead of serverAuth.
CertAndKey IssueCert(const CertAndKey& ca, const std::string& common_name,
                     const std::vector<std::string>& ip_sans,
                     const std::vector<std::string>& dns_sans, bool client = false);

}  // namespace edl::kube::testing
