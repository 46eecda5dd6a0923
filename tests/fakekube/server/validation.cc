// Object validation (see validation.h), after pkg/apis/core/validation,
// pkg/apis/scheduling/validation and apimachinery's ValidateObjectMeta.
#include "tests/fakekube/server/validation.h"

#include "tests/fakekube/server/job_validation.h"
#include "tests/fakekube/server/json_fields.h"
#include "tests/fakekube/server/name_formats.h"
#include "tests/fakekube/server/pod_spec_validation.h"
#include "tests/fakekube/server/rbac_validation.h"

namespace edl::fakekube {
namespace {

void ValidateName(const ResourceInfo& resource, const Json& meta, std::vector<FieldError>& errors) {
  const std::string name = StringAt(meta, "name");
  if (name.empty()) {
    errors.push_back(RequiredField("metadata.name", "name or generateName is required"));
    return;
  }
  std::vector<std::string> broken;
  if (resource.name == "services") {
    broken = Dns1035LabelErrors(name);
  } else if (resource.name == "namespaces") {
    broken = Dns1123LabelErrors(name);
  } else {
    broken = Dns1123SubdomainErrors(name);
  }
  for (const std::string& e : broken) {
    errors.push_back(InvalidField("metadata.name", Json(name).dump(), e));
  }
}

// ValidateOwnerReferences: the path carries no index, as apimachinery's.
void ValidateOwnerReferences(const Json& meta, std::vector<FieldError>& errors) {
  const std::string path = "metadata.ownerReferences";
  const std::pair<const char*, const char*> required[] = {
      {"apiVersion", "version"}, {"kind", "kind"}, {"name", "name"}, {"uid", "uid"}};
  std::string controller;
  for (const Json& ref : ArrayAt(meta, "ownerReferences")) {
    for (const auto& [field, words] : required) {
      if (StringAt(ref, field).empty()) {
        errors.push_back(
            InvalidField(path + "." + field, "\"\"", std::string(words) + " must not be empty"));
      }
    }
    if (!ref.is_object() || !ref.value("controller", false)) continue;
    const std::string current = StringAt(ref, "kind") + "/" + StringAt(ref, "name");
    if (controller.empty()) {
      controller = current;
    } else {
      errors.push_back(InvalidField(path, "",
                                    "Only one reference can have Controller set to true. Found "
                                    "\"true\" in references for " +
                                        controller + " and " + current));
    }
  }
}

void ValidatePod(const Json& pod, std::vector<FieldError>& errors) {
  ValidatePodSpec(ObjectAt(pod, "spec"), "spec", errors);
}

void ValidateService(const Json& service, std::vector<FieldError>& errors) {
  const Json spec = ObjectAt(service, "spec");
  const Json ports = ArrayAt(spec, "ports");
  if (ports.empty() && StringAt(spec, "clusterIP") != "None") {
    errors.push_back(RequiredField("spec.ports"));
  }
  for (size_t i = 0; i < ports.size(); ++i) {
    const Json& p = ports[i];
    const std::string path = "spec.ports[" + std::to_string(i) + "]";
    if (ports.size() > 1 && StringAt(p, "name").empty()) {
      errors.push_back(RequiredField(path + ".name"));
    }
    // A missing port decodes as 0.
    const Json port = p.is_object() ? p.value("port", Json(0)) : Json(0);
    if (!port.is_number_integer() || port.get<int64_t>() < 1 || port.get<int64_t>() > 65535) {
      errors.push_back(
          InvalidField(path + ".port", port.dump(), "must be between 1 and 65535, inclusive"));
    }
  }
}

// ConfigMap and Secret: the keys of data and binaryData.
void ValidateKeys(const Json& object, std::vector<FieldError>& errors) {
  for (const char* field : {"data", "binaryData"}) {
    const Json entries = ObjectAt(object, field);
    for (const auto& entry : entries.items()) {
      const std::string& key = entry.key();
      for (const std::string& e : ConfigMapKeyErrors(key)) {
        errors.push_back(InvalidField(std::string(field) + "[" + key + "]", Json(key).dump(), e));
      }
    }
  }
}

void ValidatePriorityClass(const Json& pc, std::vector<FieldError>& errors) {
  if (!pc.contains("value") || !pc["value"].is_number_integer()) {
    errors.push_back(RequiredField("value"));
  } else if (pc["value"].get<int64_t>() > 1000000000 &&
             StringAt(ObjectAt(pc, "metadata"), "name").rfind("system-", 0) != 0) {
    errors.push_back(
        ForbiddenField("value", "maximum allowed value of a user defined priority is 1000000000"));
  }
}

}  // namespace

std::optional<ApiError> ValidateObject(const ResourceInfo& resource, const Json& object) {
  std::vector<FieldError> errors;
  const Json meta = ObjectAt(object, "metadata");
  ValidateName(resource, meta, errors);
  ValidateOwnerReferences(meta, errors);
  if (resource.name == "pods") ValidatePod(object, errors);
  if (resource.name == "services") ValidateService(object, errors);
  if (resource.name == "configmaps" || resource.name == "secrets") ValidateKeys(object, errors);
  if (resource.name == "jobs") ValidateJob(object, errors);
  if (resource.name == "priorityclasses") ValidatePriorityClass(object, errors);
  if (resource.name == "roles") ValidateRole(object, errors);
  if (resource.name == "rolebindings") ValidateRoleBinding(object, errors);
  if (errors.empty()) return std::nullopt;
  return InvalidError(resource.kind, StringAt(meta, "name"), errors, resource.group);
}

}  // namespace edl::fakekube
