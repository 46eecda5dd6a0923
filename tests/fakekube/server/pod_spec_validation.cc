// PodSpec validation (see pod_spec_validation.h), after
// pkg/apis/core/validation/validation.go.
#include "tests/fakekube/server/pod_spec_validation.h"

#include <set>

#include "tests/fakekube/server/json_fields.h"
#include "tests/fakekube/server/name_formats.h"

namespace edl::fakekube {
namespace {

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// A name that must be a DNS-1123 label: Required when empty, Invalid per
// broken rule, Duplicate when `seen` already holds it.
void ValidateLabelName(const Json& object, const std::string& path, std::set<std::string>& seen,
                       std::vector<FieldError>& errors) {
  const std::string name = StringAt(object, "name");
  if (name.empty()) {
    errors.push_back(RequiredField(path));
    return;
  }
  for (const std::string& e : Dns1123LabelErrors(name)) {
    errors.push_back(InvalidField(path, Json(name).dump(), e));
  }
  if (!seen.insert(name).second) {
    errors.push_back(FieldError{"FieldValueDuplicate", path, "", Json(name).dump()});
  }
}

void RequireString(const Json& object, const char* key, const std::string& path,
                   std::vector<FieldError>& errors) {
  if (StringAt(object, key).empty()) errors.push_back(RequiredField(path + "." + key));
}

void ValidateEnv(const Json& container, const std::string& path, std::vector<FieldError>& errors) {
  const Json env = ArrayAt(container, "env");
  for (size_t i = 0; i < env.size(); ++i) {
    const std::string at = Index(path + ".env", i);
    RequireString(env[i], "name", at, errors);
    const Json from = ObjectAt(env[i], "valueFrom");
    if (from.contains("fieldRef")) {
      RequireString(ObjectAt(from, "fieldRef"), "fieldPath", at + ".valueFrom.fieldRef", errors);
    }
    for (const char* selector : {"configMapKeyRef", "secretKeyRef"}) {
      if (from.contains(selector)) {
        RequireString(ObjectAt(from, selector), "key", at + ".valueFrom." + selector, errors);
      }
    }
  }
}

void ValidatePorts(const Json& container, const std::string& path,
                   std::vector<FieldError>& errors) {
  const Json ports = ArrayAt(container, "ports");
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string at = Index(path + ".ports", i) + ".containerPort";
    const Json port = ports[i].is_object() ? ports[i].value("containerPort", Json()) : Json();
    if (!port.is_number_integer() || port.get<int64_t>() == 0) {
      errors.push_back(RequiredField(at));
    } else if (port.get<int64_t>() < 1 || port.get<int64_t>() > 65535) {
      errors.push_back(InvalidField(at, port.dump(), "must be between 1 and 65535, inclusive"));
    }
  }
}

void ValidateMounts(const Json& container, const std::string& path,
                    const std::set<std::string>& volumes, std::vector<FieldError>& errors) {
  const Json mounts = ArrayAt(container, "volumeMounts");
  for (size_t i = 0; i < mounts.size(); ++i) {
    const std::string at = Index(path + ".volumeMounts", i);
    const std::string name = StringAt(mounts[i], "name");
    if (name.empty()) {
      errors.push_back(RequiredField(at + ".name"));
    } else if (!volumes.count(name)) {
      errors.push_back(FieldError{"FieldValueNotFound", at + ".name", "", Json(name).dump()});
    }
    RequireString(mounts[i], "mountPath", at, errors);
  }
}

// A volume's source: there must be one; the fields each source edl uses
// requires; the key and path of each item it projects.
void ValidateVolumeSource(const Json& volume, const std::string& path,
                          std::vector<FieldError>& errors) {
  if (!volume.is_object() || volume.size() == (volume.contains("name") ? 1u : 0u)) {
    errors.push_back(RequiredField(path, "must specify a volume type"));
    return;
  }
  const std::pair<const char*, const char*> required[] = {{"hostPath", "path"},
                                                          {"persistentVolumeClaim", "claimName"},
                                                          {"configMap", "name"},
                                                          {"secret", "secretName"}};
  for (const auto& [source, field] : required) {
    if (!volume.contains(source)) continue;
    const Json s = ObjectAt(volume, source);
    RequireString(s, field, path + "." + source, errors);
    const Json items = ArrayAt(s, "items");
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string at = Index(path + "." + source + ".items", i);
      RequireString(items[i], "key", at, errors);
      RequireString(items[i], "path", at, errors);
    }
  }
}

}  // namespace

void ValidatePodSpec(const Json& spec, const std::string& path, std::vector<FieldError>& errors) {
  std::set<std::string> volume_names;
  const Json volumes = ArrayAt(spec, "volumes");
  for (size_t i = 0; i < volumes.size(); ++i) {
    const std::string at = Index(path + ".volumes", i);
    ValidateLabelName(volumes[i], at + ".name", volume_names, errors);
    ValidateVolumeSource(volumes[i], at, errors);
  }
  const Json containers = ArrayAt(spec, "containers");
  if (containers.empty()) errors.push_back(RequiredField(path + ".containers"));
  std::set<std::string> container_names;
  for (size_t i = 0; i < containers.size(); ++i) {
    const std::string at = Index(path + ".containers", i);
    const Json& c = containers[i];
    ValidateLabelName(c, at + ".name", container_names, errors);
    RequireString(c, "image", at, errors);
    ValidateEnv(c, at, errors);
    ValidatePorts(c, at, errors);
    ValidateMounts(c, at, volume_names, errors);
  }
  const std::string policy = StringAt(spec, "restartPolicy");
  if (!policy.empty() && policy != "Always" && policy != "OnFailure" && policy != "Never") {
    errors.push_back(FieldError{"FieldValueNotSupported", path + ".restartPolicy",
                                "supported values: \"Always\", \"OnFailure\", \"Never\"",
                                Json(policy).dump()});
  }
}

}  // namespace edl::fakekube
