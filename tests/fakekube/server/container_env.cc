// ContainerEnv: env resolution and $(VAR) expansion.
#include "tests/fakekube/server/container_env.h"

#include "tests/fakekube/server/base64.h"

namespace edl::fakekube {
namespace {

const std::string* Lookup(const EnvList& env, const std::string& name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->first == name) return &it->second;
  }
  return nullptr;
}

void Set(EnvList& env, const std::string& name, std::string value) {
  for (auto& [n, v] : env) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  env.emplace_back(name, std::move(value));
}

std::string Field(const Json& object, const char* a, const char* b) {
  if (!object.contains(a) || !object[a].is_object() || !object[a].contains(b) ||
      !object[a][b].is_string()) {
    return "";
  }
  return object[a][b].get<std::string>();
}

// metadata.labels['key'] / metadata.annotations['key'].
bool MapField(const Json& pod, const std::string& path, const std::string& prefix, const char* map,
              std::string* value) {
  if (path.rfind(prefix + "['", 0) != 0 || path.size() < prefix.size() + 4 ||
      path.compare(path.size() - 2, 2, "']") != 0) {
    return false;
  }
  std::string key = path.substr(prefix.size() + 2, path.size() - prefix.size() - 4);
  const Json& meta = pod["metadata"];
  *value = meta.contains(map) && meta[map].contains(key) && meta[map][key].is_string()
               ? meta[map][key].get<std::string>()
               : "";
  return true;
}

Result<std::string> FieldRef(const Json& pod, const std::string& path,
                             const PodPlacement& placement) {
  if (path == "metadata.name") return Field(pod, "metadata", "name");
  if (path == "metadata.namespace") return Field(pod, "metadata", "namespace");
  if (path == "metadata.uid") return Field(pod, "metadata", "uid");
  if (path == "spec.nodeName") return Field(pod, "spec", "nodeName");
  if (path == "spec.serviceAccountName") return Field(pod, "spec", "serviceAccountName");
  if (path == "status.podIP" || path == "status.podIPs") return placement.pod_ip;
  if (path == "status.hostIP" || path == "status.hostIPs") return placement.host_ip;
  std::string value;
  if (MapField(pod, path, "metadata.labels", "labels", &value)) return value;
  if (MapField(pod, path, "metadata.annotations", "annotations", &value)) return value;
  return InvalidArgument("unsupported fieldRef fieldPath \"" + path + "\"");
}

const char* KindName(const std::string& kind) { return kind == "secrets" ? "Secret" : "ConfigMap"; }

// secretKeyRef / configMapKeyRef.
Result<std::optional<std::string>> KeyRef(const Store& store, const std::string& kind,
                                          const std::string& ns, const Json& ref) {
  std::string name = ref.value("name", std::string());
  std::string key = ref.value("key", std::string());
  bool optional = ref.value("optional", false);
  Result<std::map<std::string, std::string>> data = ReadKeyedData(store, kind, ns, name);
  if (!data.ok()) {
    if (optional) return std::optional<std::string>();
    return FailedPrecondition(data.status().message());
  }
  auto it = data->find(key);
  if (it == data->end()) {
    if (optional) return std::optional<std::string>();
    return FailedPrecondition("couldn't find key " + key + " in " + KindName(kind) + " " + ns +
                              "/" + name);
  }
  return std::optional<std::string>(it->second);
}

}  // namespace

std::string ExpandVars(const std::string& text, const EnvList& env) {
  std::string out;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    if (text[i] != '$' || i + 1 >= n) {
      out += text[i];
      continue;
    }
    char next = text[i + 1];
    if (next == '$') {
      out += '$';
      ++i;
    } else if (next == '(') {
      size_t close = text.find(')', i + 2);
      if (close == std::string::npos) {
        out += text.substr(i);
        break;
      }
      std::string name = text.substr(i + 2, close - i - 2);
      const std::string* value = name.empty() ? nullptr : Lookup(env, name);
      out += value ? *value : "$(" + name + ")";
      i = close;
    } else {
      out += '$';
      out += next;
      ++i;
    }
  }
  return out;
}

Result<EnvList> ContainerEnv(const Store& store, const Json& pod, const Json& container,
                             const PodPlacement& placement, const EnvList& base) {
  EnvList env = base;
  const std::string ns = Field(pod, "metadata", "namespace");
  if (container.contains("envFrom") && container["envFrom"].is_array()) {
    for (const Json& from : container["envFrom"]) {
      std::string prefix = from.value("prefix", std::string());
      for (const char* field : {"configMapRef", "secretRef"}) {
        if (!from.contains(field)) continue;
        const Json& ref = from[field];
        std::string kind = std::string(field) == "secretRef" ? "secrets" : "configmaps";
        Result<std::map<std::string, std::string>> data =
            ReadKeyedData(store, kind, ns, ref.value("name", std::string()));
        if (!data.ok()) {
          if (ref.value("optional", false)) continue;
          return FailedPrecondition(data.status().message());
        }
        for (const auto& [key, value] : *data) Set(env, prefix + key, value);
      }
    }
  }
  if (container.contains("env") && container["env"].is_array()) {
    for (const Json& var : container["env"]) {
      std::string name = var.value("name", std::string());
      if (name.empty()) continue;
      if (var.contains("value") && var["value"].is_string()) {
        Set(env, name, ExpandVars(var["value"].get<std::string>(), env));
        continue;
      }
      if (!var.contains("valueFrom")) {
        Set(env, name, "");
        continue;
      }
      const Json& from = var["valueFrom"];
      if (from.contains("fieldRef")) {
        Result<std::string> value =
            FieldRef(pod, from["fieldRef"].value("fieldPath", std::string()), placement);
        if (!value.ok()) return value.status().WithPrefix("env " + name);
        Set(env, name, *value);
      } else if (from.contains("secretKeyRef") || from.contains("configMapKeyRef")) {
        bool secret = from.contains("secretKeyRef");
        Result<std::optional<std::string>> value =
            KeyRef(store, secret ? "secrets" : "configmaps", ns,
                   from[secret ? "secretKeyRef" : "configMapKeyRef"]);
        if (!value.ok()) return value.status();
        if (value->has_value()) Set(env, name, **value);
      } else {
        return InvalidArgument("env " + name + ": unsupported valueFrom " + from.dump());
      }
    }
  }
  return env;
}

std::vector<std::string> ContainerArgv(const Json& container, const EnvList& env) {
  std::vector<std::string> argv;
  for (const char* field : {"command", "args"}) {
    if (!container.contains(field) || !container[field].is_array()) continue;
    for (const Json& arg : container[field]) {
      if (arg.is_string()) argv.push_back(ExpandVars(arg.get<std::string>(), env));
    }
  }
  return argv;
}

Result<std::map<std::string, std::string>> ReadKeyedData(const Store& store,
                                                         const std::string& kind,
                                                         const std::string& ns,
                                                         const std::string& name) {
  ApiResult<Json> object = store.Get(kind, ns, name);
  if (!object.ok()) {
    return NotFound((kind == "secrets" ? "secret \"" : "configmap \"") + name + "\" not found");
  }
  std::map<std::string, std::string> out;
  const Json& o = *object.value;
  auto take = [&](const char* field, bool base64) -> Status {
    if (!o.contains(field) || !o[field].is_object()) return Status::Ok();
    for (const auto& [key, value] : o[field].items()) {
      if (!value.is_string()) continue;
      if (!base64) {
        out[key] = value.get<std::string>();
        continue;
      }
      Result<std::string> decoded = DecodeSecretData(value.get<std::string>());
      if (!decoded.ok()) {
        return decoded.status().WithPrefix(std::string(KindName(kind)) + " " + ns + "/" + name +
                                           " key " + key);
      }
      out[key] = *decoded;
    }
    return Status::Ok();
  };
  if (kind == "secrets") {
    EDL_RETURN_IF_ERROR(take("data", true));
    EDL_RETURN_IF_ERROR(take("stringData", false));
  } else {
    EDL_RETURN_IF_ERROR(take("data", false));
    EDL_RETURN_IF_ERROR(take("binaryData", true));
  }
  return out;
}

Result<std::string> DecodeSecretData(const std::string& text) {
  std::optional<std::string> decoded = Base64Decode(text);
  if (!decoded) return InvalidArgument("illegal base64 data");
  return std::move(*decoded);
}

}  // namespace edl::fakekube
