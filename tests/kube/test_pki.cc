#include "tests/kube/test_pki.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/check.h"

namespace edl::kube::testing {
namespace {

std::string ToPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string ToPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

X509* ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EDL_CHECK(cert != nullptr);
  return cert;
}

EVP_PKEY* ReadKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EDL_CHECK(key != nullptr);
  return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  EDL_CHECK(ext != nullptr) << "extension " << value;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

X509* NewCert(EVP_PKEY* key, const std::string& cn) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  unsigned char serial[8];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  return cert;
}

}  // namespace

CertAndKey MakeCa(const std::string& common_name) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  EDL_CHECK(key != nullptr);
  X509* cert = NewCert(key, common_name);
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  AddExtension(cert, cert, NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  AddExtension(cert, cert, NID_subject_key_identifier, "hash");
  EDL_CHECK(X509_sign(cert, key, EVP_sha256()) > 0);
  CertAndKey out{ToPem(cert), ToPem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

CertAndKey IssueCert(const CertAndKey& ca, const std::string& common_name,
                     const std::vector<std::string>& ip_sans,
                     const std::vector<std::string>& dns_sans, bool client) {
  X509* ca_cert = ReadCert(ca.cert_pem);
  EVP_PKEY* ca_key = ReadKey(ca.key_pem);
  EVP_PKEY* key = EVP_EC_gen("P-256");
  EDL_CHECK(key != nullptr);
  X509* cert = NewCert(key, common_name);
  X509_set_issuer_name(cert, X509_get_subject_name(ca_cert));
  AddExtension(cert, ca_cert, NID_basic_constraints, "critical,CA:FALSE");
  AddExtension(cert, ca_cert, NID_key_usage, "critical,digitalSignature");
  AddExtension(cert, ca_cert, NID_ext_key_usage, client ? "clientAuth" : "serverAuth");
  std::string sans;
  for (const std::string& ip : ip_sans) sans += (sans.empty() ? "" : ",") + ("IP:" + ip);
  for (const std::string& dns : dns_sans) {
    sans += (sans.empty() ? "" : ",") + ("DNS:" + dns);
  }
  if (!sans.empty()) AddExtension(cert, ca_cert, NID_subject_alt_name, sans);
  EDL_CHECK(X509_sign(cert, ca_key, EVP_sha256()) > 0);
  CertAndKey out{ToPem(cert), ToPem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  X509_free(ca_cert);
  EVP_PKEY_free(ca_key);
  return out;
}

}  // namespace edl::kube::testing
