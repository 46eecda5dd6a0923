// Who sends a request to the fake API server, as kube-apiserver's
// authenticators establish it from the bearer token:
//
// * the cluster admin: the kubeconfig's token; user kubernetes-admin in
//   group system:masters, which RBAC never restricts (as kubeadm's and
//   kind's admin.conf);
// * users with a static token (kube-apiserver --token-auth-file);
// * service accounts: the token the kubelet mounts into a pod names the
//   pod's namespace and service account and carries an HMAC-SHA256 of them
//   under the server's key, so a changed name does not authenticate (it
//   stands for the signed JWT of a real bound token). It authenticates as
//   system:serviceaccount:<namespace>:<name>, in groups
//   system:serviceaccounts and system:serviceaccounts:<namespace>.
//
// Everyone authenticated is also in system:authenticated. Plain values and
// pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edl::fakekube {

inline constexpr char kAdminUser[] = "kubernetes-admin";
inline constexpr char kMastersGroup[] = "system:masters";

struct UserInfo {
  std::string name;  // "kubernetes-admin", "system:serviceaccount:edl:edl-master"
  std::vector<std::string> groups;
  bool InGroup(const std::string& group) const;
  bool admin() const { return InGroup(kMastersGroup); }
};

// "system:serviceaccount:<ns>:<name>".
std::string ServiceAccountUser(const std::string& ns, const std::string& name);

// The token of service account `name` in `ns` under `key` (REQUIRES: key
// not empty).
std::string ServiceAccountToken(const std::string& key, const std::string& ns,
                                const std::string& name);

// The tokens a server accepts.
struct Credentials {
  std::string admin_token;  // "": every request without another valid token is the admin's
  std::map<std::string, std::string> user_tokens;  // token -> user name
  std::string service_account_key;                 // "": no service-account token is valid
};

// The user whose token the Authorization header carries ("Bearer <token>",
// the scheme in any case), or nullopt: 401.
std::optional<UserInfo> Authenticate(std::string_view authorization,
                                     const Credentials& credentials);

}  // namespace edl::fakekube
