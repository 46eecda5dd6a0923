// Authentication (see identity.h).
#include "tests/fakekube/server/identity.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>

namespace edl::fakekube {
namespace {

constexpr std::string_view kTokenPrefix = "fakesa:";

// HMAC-SHA256 of `message` under `key`, in lower-case hex.
std::string Mac(const std::string& key, const std::string& message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &length);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

// "Bearer <token>" -> token; "" if the header is not a bearer token.
std::string BearerToken(std::string_view header) {
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  const size_t space = header.find(' ');
  if (space == std::string_view::npos) return "";
  std::string scheme(header.substr(0, space));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  std::string_view rest = header.substr(space + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  return scheme == "bearer" ? std::string(rest) : "";
}

// The service account a token of ServiceAccountToken's form names, if its
// MAC is right.
std::optional<UserInfo> ServiceAccount(const std::string& token, const std::string& key) {
  if (key.empty() || token.rfind(kTokenPrefix, 0) != 0) return std::nullopt;
  const std::string rest = token.substr(kTokenPrefix.size());
  // A namespace is a DNS label and a service account name a DNS subdomain:
  // neither holds a ':'.
  const size_t first = rest.find(':');
  const size_t last = rest.rfind(':');
  if (first == std::string::npos || first == last) return std::nullopt;
  const std::string ns = rest.substr(0, first);
  const std::string name = rest.substr(first + 1, last - first - 1);
  if (ns.empty() || name.empty() || ServiceAccountToken(key, ns, name) != token) {
    return std::nullopt;
  }
  return UserInfo{
      ServiceAccountUser(ns, name),
      {"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}};
}

}  // namespace

bool UserInfo::InGroup(const std::string& group) const {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

std::string ServiceAccountUser(const std::string& ns, const std::string& name) {
  return "system:serviceaccount:" + ns + ":" + name;
}

std::string ServiceAccountToken(const std::string& key, const std::string& ns,
                                const std::string& name) {
  return std::string(kTokenPrefix) + ns + ":" + name + ":" + Mac(key, ns + "/" + name);
}

std::optional<UserInfo> Authenticate(std::string_view authorization,
                                     const Credentials& credentials) {
  const UserInfo admin{kAdminUser, {kMastersGroup, "system:authenticated"}};
  const std::string token = BearerToken(authorization);
  if (!token.empty()) {
    if (!credentials.admin_token.empty() && token == credentials.admin_token) return admin;
    auto user = credentials.user_tokens.find(token);
    if (user != credentials.user_tokens.end()) {
      return UserInfo{user->second, {"system:authenticated"}};
    }
    if (auto account = ServiceAccount(token, credentials.service_account_key)) return account;
  }
  if (credentials.admin_token.empty()) return admin;
  return std::nullopt;
}

}  // namespace edl::fakekube
