// kubeconfig files (client-go tools/clientcmd): parsing with yaml-cpp, the
// first-wins merge over a colon-separated list, and resolving one context
// into a ClusterConfig. yaml-cpp exceptions are caught here and become
// errors naming the file and the field.
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <sstream>

#include "base/file.h"
#include "kube/base64.h"
#include "kube/config.h"

namespace edl::kube {
namespace {

struct Source {
  std::string path;
  std::string dir;  // resolves relative paths inside this file
  YAML::Node root;
};

// One named entry of clusters/contexts/users, remembered with where it came
// from so errors can name "users[0].user.token" in the right file.
struct Entry {
  const Source* source = nullptr;
  std::string where;  // "users[0].user"
  YAML::Node body;
};

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(list);
  while (std::getline(in, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status FileError(const std::string& path, const std::string& what) {
  return InvalidArgument("kubeconfig " + path + ": " + what);
}

Status FieldError(const Entry& e, const std::string& field, const std::string& what) {
  return FileError(e.source->path, e.where + "." + field + ": " + what);
}

// The string at body[field]; nullopt when absent or null.
Result<std::optional<std::string>> GetString(const Entry& e, const std::string& field) {
  YAML::Node n = e.body[field];
  if (!n.IsDefined() || n.IsNull()) return std::optional<std::string>();
  if (!n.IsScalar()) return FieldError(e, field, "must be a string");
  return std::optional<std::string>(n.Scalar());
}

Result<bool> GetBool(const Entry& e, const std::string& field) {
  YAML::Node n = e.body[field];
  if (!n.IsDefined() || n.IsNull()) return false;
  bool value = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
    return FieldError(e, field, "must be true or false");
  }
  return value;
}

std::string Resolve(const Source& s, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return s.dir + "/" + path;
}

// PEM from `<field>-data` (base64) or from the file named by `<field>`;
// "" when neither is set.
Result<std::string> GetPem(const Entry& e, const std::string& field) {
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> data, GetString(e, field + "-data"));
  if (data && !data->empty()) {
    std::optional<std::string> pem = Base64Decode(*data);
    if (!pem) return FieldError(e, field + "-data", "not base64");
    return *pem;
  }
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> file, GetString(e, field));
  if (!file || file->empty()) return std::string();
  std::string path = Resolve(*e.source, *file);
  Result<std::string> pem = ReadFile(path);
  if (!pem.ok()) {
    return FieldError(e, field, "cannot read " + path + ": " + pem.status().message());
  }
  return std::move(*pem);
}

Result<Source> Parse(const std::string& path) {
  Source s;
  s.path = path;
  s.dir = DirOf(path);
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status().WithPrefix("kubeconfig " + path);
  try {
    s.root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return FileError(path, "not valid YAML: line " + std::to_string(e.mark.line + 1) + " column " +
                               std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!s.root.IsNull() && !s.root.IsMap()) {
    return FileError(path,
                     "must be a YAML mapping (apiVersion, kind, "
                     "clusters, contexts, users, current-context)");
  }
  return s;
}

// Adds the entries of `section` ("clusters", item key "cluster") of one file
// to `into`, keeping an existing name (first file wins).
Status Collect(const Source& s, const std::string& section, const std::string& item_key,
               std::map<std::string, Entry>* into) {
  YAML::Node list = s.root[section];
  if (!list.IsDefined() || list.IsNull()) return Status::Ok();
  if (!list.IsSequence()) return FileError(s.path, section + ": must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = section + "[" + std::to_string(i) + "]";
    YAML::Node item = list[i];
    if (!item.IsMap()) return FileError(s.path, where + ": must be a mapping");
    YAML::Node name = item["name"];
    if (!name.IsDefined() || !name.IsScalar() || name.Scalar().empty()) {
      return FileError(s.path, where + ".name: missing");
    }
    YAML::Node inner = item[item_key];
    YAML::Node body =
        inner.IsDefined() && !inner.IsNull() ? inner : YAML::Node(YAML::NodeType::Map);
    if (!body.IsMap()) {
      return FileError(s.path, where + "." + item_key + ": must be a mapping");
    }
    into->emplace(name.Scalar(), Entry{&s, where + "." + item_key, body});
  }
  return Status::Ok();
}

std::string Names(const std::map<std::string, Entry>& m) {
  std::string out;
  for (const auto& [name, e] : m) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

Result<ExecPlugin> LoadExec(const Entry& user) {
  Entry e{user.source, user.where + ".exec", user.body["exec"]};
  if (!e.body.IsMap()) return FieldError(user, "exec", "must be a mapping");
  ExecPlugin plugin;
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> command, GetString(e, "command"));
  if (!command || command->empty()) return FieldError(e, "command", "missing");
  plugin.command = *command;
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> api, GetString(e, "apiVersion"));
  plugin.api_version = api.value_or("client.authentication.k8s.io/v1");
  if (plugin.api_version != "client.authentication.k8s.io/v1" &&
      plugin.api_version != "client.authentication.k8s.io/v1beta1") {
    return FieldError(e, "apiVersion",
                      "\"" + plugin.api_version +
                          "\" is not supported (use "
                          "client.authentication.k8s.io/v1)");
  }
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> hint, GetString(e, "installHint"));
  plugin.install_hint = hint.value_or("");
  YAML::Node args = e.body["args"];
  if (args.IsDefined() && !args.IsNull()) {
    if (!args.IsSequence()) return FieldError(e, "args", "must be a list");
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].IsScalar()) {
        return FieldError(e, "args[" + std::to_string(i) + "]", "must be a string");
      }
      plugin.args.push_back(args[i].Scalar());
    }
  }
  YAML::Node env = e.body["env"];
  if (env.IsDefined() && !env.IsNull()) {
    if (!env.IsSequence()) return FieldError(e, "env", "must be a list");
    for (size_t i = 0; i < env.size(); ++i) {
      std::string at = "env[" + std::to_string(i) + "]";
      const YAML::Node item = env[i];
      if (!item.IsMap() || !item["name"].IsDefined() || !item["name"].IsScalar()) {
        return FieldError(e, at, "must be {name, value}");
      }
      const YAML::Node value = item["value"];
      plugin.env.emplace_back(item["name"].Scalar(),
                              value.IsDefined() && value.IsScalar() ? value.Scalar() : "");
    }
  }
  return plugin;
}

Status LoadCluster(const Entry& e, ClusterConfig* config) {
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> server, GetString(e, "server"));
  if (!server || server->empty()) return FieldError(e, "server", "missing");
  if (server->rfind("https://", 0) != 0 && server->rfind("http://", 0) != 0) {
    return FieldError(e, "server", "\"" + *server + "\" must start with https:// or http://");
  }
  config->server = *server;
  EDL_ASSIGN_OR_RETURN(config->ca_pem, GetPem(e, "certificate-authority"));
  EDL_ASSIGN_OR_RETURN(config->insecure_skip_tls_verify, GetBool(e, "insecure-skip-tls-verify"));
  if (config->insecure_skip_tls_verify && !config->ca_pem.empty()) {
    return FieldError(e, "insecure-skip-tls-verify",
                      "cannot be true together with certificate-authority");
  }
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> name, GetString(e, "tls-server-name"));
  config->tls_server_name = name.value_or("");
  return Status::Ok();
}

Status LoadUser(const Entry& e, ClusterConfig* config) {
  if (e.body["auth-provider"].IsDefined()) {
    return FieldError(e, "auth-provider",
                      "legacy auth providers are not supported; use an exec "
                      "credential plugin");
  }
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> token, GetString(e, "token"));
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> token_file, GetString(e, "tokenFile"));
  if (token && !token->empty()) {
    config->token = *token;  // token beats tokenFile
  } else if (token_file && !token_file->empty()) {
    config->token_file = Resolve(*e.source, *token_file);
    Result<std::string> text = ReadFile(config->token_file);
    if (!text.ok()) {
      return FieldError(e, "tokenFile",
                        "cannot read " + config->token_file + ": " + text.status().message());
    }
    std::string t = *text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
    config->token = t;
  } else if (e.body["exec"].IsDefined() && !e.body["exec"].IsNull()) {
    EDL_ASSIGN_OR_RETURN(config->exec, LoadExec(e));
  }
  EDL_ASSIGN_OR_RETURN(config->client_cert_pem, GetPem(e, "client-certificate"));
  EDL_ASSIGN_OR_RETURN(config->client_key_pem, GetPem(e, "client-key"));
  if (config->client_cert_pem.empty() != config->client_key_pem.empty()) {
    return FieldError(e, config->client_cert_pem.empty() ? "client-certificate" : "client-key",
                      "missing (client-certificate and client-key go "
                      "together)");
  }
  return Status::Ok();
}

Result<ClusterConfig> Load(const std::string& kubeconfig_list, const std::string& context) {
  std::vector<std::string> paths = SplitList(kubeconfig_list);
  if (paths.empty()) return InvalidArgument("kubeconfig: empty path list");
  std::vector<Source> sources;
  sources.reserve(paths.size());
  for (const std::string& path : paths) {
    if (paths.size() > 1 && !Exists(path)) continue;  // as client-go does
    EDL_ASSIGN_OR_RETURN(Source s, Parse(path));
    sources.push_back(std::move(s));
  }
  if (sources.empty()) {
    return NotFound("kubeconfig " + kubeconfig_list + ": no such file");
  }
  std::map<std::string, Entry> clusters, contexts, users;
  std::string current;
  for (const Source& s : sources) {
    EDL_RETURN_IF_ERROR(Collect(s, "clusters", "cluster", &clusters));
    EDL_RETURN_IF_ERROR(Collect(s, "contexts", "context", &contexts));
    EDL_RETURN_IF_ERROR(Collect(s, "users", "user", &users));
    YAML::Node cc = s.root["current-context"];
    if (current.empty() && cc.IsDefined() && cc.IsScalar()) current = cc.Scalar();
  }
  std::string name = context.empty() ? current : context;
  if (name.empty()) {
    return FileError(kubeconfig_list,
                     "current-context is not set and no --context was given "
                     "(contexts: " +
                         Names(contexts) + ")");
  }
  auto ctx = contexts.find(name);
  if (ctx == contexts.end()) {
    return NotFound("kubeconfig " + kubeconfig_list + ": context \"" + name +
                    "\" not found (contexts: " + Names(contexts) + ")");
  }
  const Entry& c = ctx->second;
  ClusterConfig config;
  config.description = "kubeconfig " + kubeconfig_list + " context " + name;
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> cluster_name, GetString(c, "cluster"));
  if (!cluster_name || cluster_name->empty()) {
    return FieldError(c, "cluster", "missing");
  }
  auto cluster = clusters.find(*cluster_name);
  if (cluster == clusters.end()) {
    return FieldError(
        c, "cluster",
        "cluster \"" + *cluster_name + "\" not found (clusters: " + Names(clusters) + ")");
  }
  EDL_RETURN_IF_ERROR(LoadCluster(cluster->second, &config));
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> user_name, GetString(c, "user"));
  if (user_name && !user_name->empty()) {
    auto user = users.find(*user_name);
    if (user == users.end()) {
      return FieldError(c, "user",
                        "user \"" + *user_name + "\" not found (users: " + Names(users) + ")");
    }
    EDL_RETURN_IF_ERROR(LoadUser(user->second, &config));
  }
  EDL_ASSIGN_OR_RETURN(std::optional<std::string> ns, GetString(c, "namespace"));
  if (ns && !ns->empty()) config.namespace_name = *ns;
  return config;
}

}  // namespace

Result<ClusterConfig> LoadKubeconfig(const std::string& kubeconfig_list,
                                     const std::string& context) {
  try {
    return Load(kubeconfig_list, context);
  } catch (const YAML::Exception& e) {  // a shape the checks above missed
    return FileError(kubeconfig_list, e.what());
  }
}

}  // namespace edl::kube
