// PodVolumes: files for configMap/secret/projected volumes, emptyDir and
// hostPath directories.
#include "tests/fakekube/server/pod_volumes.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/fakekube/server/container_env.h"
#include "tests/fakekube/server/identity.h"

namespace edl::fakekube {
namespace {

namespace fs = std::filesystem;

Status WriteFile(const fs::path& path, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  if (!out) return Internal("writing volume file " + path.string() + " failed");
  return Status::Ok();
}

// Keys of `data` selected by `items` ([{key, path}]) or all keys, written
// under dir.
Status WriteKeys(const std::map<std::string, std::string>& data, const Json& source,
                 const fs::path& dir, const std::string& what) {
  if (source.contains("items") && source["items"].is_array()) {
    for (const Json& item : source["items"]) {
      std::string key = item.value("key", std::string());
      auto it = data.find(key);
      if (it == data.end()) {
        if (source.value("optional", false)) continue;
        return FailedPrecondition("configmap references non-existent config key: " + key + " (" +
                                  what + ")");
      }
      EDL_RETURN_IF_ERROR(WriteFile(dir / item.value("path", key), it->second));
    }
    return Status::Ok();
  }
  for (const auto& [key, value] : data) EDL_RETURN_IF_ERROR(WriteFile(dir / key, value));
  return Status::Ok();
}

Status WriteKeyedVolume(const Store& store, const std::string& kind, const std::string& ns,
                        const Json& source, const fs::path& dir) {
  std::string name = source.value(kind == "secrets" ? "secretName" : "name", std::string());
  if (name.empty()) name = source.value("name", std::string());
  Result<std::map<std::string, std::string>> data = ReadKeyedData(store, kind, ns, name);
  if (!data.ok()) {
    if (source.value("optional", false)) return Status::Ok();
    return FailedPrecondition(data.status().message());
  }
  return WriteKeys(*data, source, dir, name);
}

Status WriteProjected(const Store& store, const Json& pod, const Json& source, const fs::path& dir,
                      const ServiceAccountFiles& service_account) {
  const std::string ns = pod["metadata"].value("namespace", std::string("default"));
  if (!source.contains("sources") || !source["sources"].is_array()) return Status::Ok();
  for (const Json& part : source["sources"]) {
    if (part.contains("serviceAccountToken")) {
      EDL_RETURN_IF_ERROR(
          WriteFile(dir / part["serviceAccountToken"].value("path", std::string("token")),
                    service_account.TokenFor(pod)));
    } else if (part.contains("configMap")) {
      EDL_RETURN_IF_ERROR(WriteKeyedVolume(store, "configmaps", ns, part["configMap"], dir));
    } else if (part.contains("secret")) {
      EDL_RETURN_IF_ERROR(WriteKeyedVolume(store, "secrets", ns, part["secret"], dir));
    } else if (part.contains("downwardAPI")) {
      const Json& items = part["downwardAPI"].value("items", Json::array());
      for (const Json& item : items) {
        std::string field =
            item.contains("fieldRef") ? item["fieldRef"].value("fieldPath", std::string()) : "";
        std::string value;
        if (field == "metadata.namespace")
          value = ns;
        else if (field == "metadata.name")
          value = pod["metadata"].value("name", std::string());
        else if (field == "metadata.uid")
          value = pod["metadata"].value("uid", std::string());
        else
          return InvalidArgument("unsupported downwardAPI fieldPath \"" + field + "\"");
        EDL_RETURN_IF_ERROR(WriteFile(dir / item.value("path", field), value));
      }
    }
  }
  // The kube-root-ca.crt ConfigMap does not exist in the fake: the CA the
  // kubelet was given stands in for it.
  if (!service_account.ca_crt.empty() && !fs::exists(dir / "ca.crt")) {
    EDL_RETURN_IF_ERROR(WriteFile(dir / "ca.crt", service_account.ca_crt));
  }
  return Status::Ok();
}

}  // namespace

std::string ServiceAccountFiles::TokenFor(const Json& pod) const {
  if (signing_key.empty()) return token;
  const Json& meta = pod.value("metadata", Json::object());
  const Json& spec = pod.value("spec", Json::object());
  std::string account = spec.value("serviceAccountName", std::string());
  if (account.empty()) account = spec.value("serviceAccount", std::string());
  if (account.empty()) account = "default";
  return ServiceAccountToken(signing_key, meta.value("namespace", std::string("default")), account);
}

Result<std::vector<BindMount>> PrepareVolumes(const Store& store, const Json& pod,
                                              const Json& container, const std::string& pod_dir,
                                              const ServiceAccountFiles& service_account) {
  const std::string ns = pod["metadata"].value("namespace", std::string("default"));
  std::map<std::string, std::string> sources;  // volume name → host path
  const Json& spec = pod["spec"];
  if (spec.contains("volumes") && spec["volumes"].is_array()) {
    for (const Json& volume : spec["volumes"]) {
      std::string name = volume.value("name", std::string());
      fs::path dir = fs::path(pod_dir) / "volumes" / name;
      std::error_code ec;
      if (volume.contains("hostPath")) {
        std::string path = volume["hostPath"].value("path", std::string());
        std::string type = volume["hostPath"].value("type", std::string());
        if (type == "DirectoryOrCreate") fs::create_directories(path, ec);
        sources[name] = path;
        continue;
      }
      fs::remove_all(dir, ec);
      fs::create_directories(dir, ec);
      if (ec) return Internal("creating " + dir.string() + ": " + ec.message());
      Status written = Status::Ok();
      if (volume.contains("configMap")) {
        written = WriteKeyedVolume(store, "configmaps", ns, volume["configMap"], dir);
      } else if (volume.contains("secret")) {
        written = WriteKeyedVolume(store, "secrets", ns, volume["secret"], dir);
      } else if (volume.contains("projected")) {
        written = WriteProjected(store, pod, volume["projected"], dir, service_account);
      } else if (!volume.contains("emptyDir")) {
        written = InvalidArgument("volume \"" + name +
                                  "\": unsupported volume type (the fake kubelet supports "
                                  "configMap, secret, projected, emptyDir and hostPath)");
      }
      if (!written.ok()) {
        return Status(written.code(), "MountVolume.SetUp failed for volume \"" + name +
                                          "\" : " + written.message());
      }
      sources[name] = dir.string();
    }
  }
  std::vector<BindMount> mounts;
  if (container.contains("volumeMounts") && container["volumeMounts"].is_array()) {
    for (const Json& mount : container["volumeMounts"]) {
      std::string name = mount.value("name", std::string());
      auto it = sources.find(name);
      if (it == sources.end()) {
        return InvalidArgument("volumeMount \"" + name + "\": no volume of that name");
      }
      std::string source = it->second;
      std::string sub_path = mount.value("subPath", std::string());
      if (!sub_path.empty()) source = (fs::path(source) / sub_path).string();
      mounts.push_back(BindMount{source, mount.value("mountPath", std::string()),
                                 mount.value("readOnly", false)});
    }
  }
  return mounts;
}

}  // namespace edl::fakekube
