// Certificate generation with the OpenSSL 3 C API (see certs.h).
#include "tests/fakekube/server/certs.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

namespace edl::fakekube {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

Status OpenSslError(const std::string& what) {
  return Internal("generating the fake API server's certificates: " + what + " failed");
}

Result<KeyPtr> NewKey() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("EVP_EC_gen");
  return key;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named `common_name`, valid from an hour ago for
// ten years, signed by `issuer_key` (and issuer `issuer`, or itself).
Result<CertPtr> NewCert(EVP_PKEY* key, const std::string& common_name, X509* issuer,
                        EVP_PKEY* issuer_key, bool ca, const std::string& san) {
  CertPtr cert(X509_new());
  if (!cert) return OpenSslError("X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof serial_bytes) != 1) return OpenSslError("RAND_bytes");
  serial_bytes[0] &= 0x7f;  // positive
  BIGNUM* serial = BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr);
  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get()));
  BN_free(serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok = true;
  if (ca) {
    ok &= AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    ok &= AddExtension(cert.get(), signer, NID_key_usage,
                       "critical,digitalSignature,keyCertSign,cRLSign");
    ok &= AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    ok &= AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    ok &= AddExtension(cert.get(), signer, NID_key_usage,
                       "critical,digitalSignature,keyEncipherment");
    ok &= AddExtension(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    ok &= AddExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
    ok &= AddExtension(cert.get(), signer, NID_subject_alt_name, san);
  }
  if (!ok) return OpenSslError("adding certificate extensions");
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) return OpenSslError("X509_sign");
  return cert;
}

Result<std::string> ToPem(X509* cert, EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  bool ok =
      cert ? PEM_write_bio_X509(bio.get(), cert) == 1
           : PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (!ok) return OpenSslError("PEM encoding");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

bool IsIpAddress(const std::string& name) {
  ASN1_OCTET_STRING* ip = a2i_IPADDRESS(name.c_str());
  if (!ip) return false;
  ASN1_OCTET_STRING_free(ip);
  return true;
}

Status WriteFile(const std::filesystem::path& path, const std::string& content, bool secret) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError(path.string() + ": cannot open for writing: " + std::strerror(errno));
  out << content;
  out.close();
  if (!out) return IoError(path.string() + ": write failed");
  if (secret && ::chmod(path.c_str(), 0600) != 0) {
    return IoError(path.string() + ": chmod failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Result<ServerCertificates> GenerateServerCertificates(const std::vector<std::string>& extra_names) {
  EDL_ASSIGN_OR_RETURN(KeyPtr ca_key, NewKey());
  EDL_ASSIGN_OR_RETURN(CertPtr ca_cert,
                       NewCert(ca_key.get(), "edl-fake-kube-ca", nullptr, ca_key.get(), true, ""));
  std::string san = "IP:127.0.0.1,DNS:localhost";
  for (const std::string& name : extra_names) {
    san += (IsIpAddress(name) ? ",IP:" : ",DNS:") + name;
  }
  EDL_ASSIGN_OR_RETURN(KeyPtr server_key, NewKey());
  EDL_ASSIGN_OR_RETURN(CertPtr server_cert, NewCert(server_key.get(), "kube-apiserver",
                                                    ca_cert.get(), ca_key.get(), false, san));
  ServerCertificates certs;
  EDL_ASSIGN_OR_RETURN(certs.ca_cert_pem, ToPem(ca_cert.get(), nullptr));
  EDL_ASSIGN_OR_RETURN(certs.ca_key_pem, ToPem(nullptr, ca_key.get()));
  EDL_ASSIGN_OR_RETURN(certs.server_cert_pem, ToPem(server_cert.get(), nullptr));
  EDL_ASSIGN_OR_RETURN(certs.server_key_pem, ToPem(nullptr, server_key.get()));
  return certs;
}

Status WriteCertificates(const ServerCertificates& certs, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create directory: " + ec.message());
  const std::filesystem::path base(dir);
  EDL_RETURN_IF_ERROR(WriteFile(base / "ca.crt", certs.ca_cert_pem, false));
  EDL_RETURN_IF_ERROR(WriteFile(base / "server.crt", certs.server_cert_pem, false));
  EDL_RETURN_IF_ERROR(WriteFile(base / "server.key", certs.server_key_pem, true));
  return Status::Ok();
}

}  // namespace edl::fakekube
