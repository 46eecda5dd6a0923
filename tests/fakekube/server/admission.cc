// Create-time admission and defaults (see admission.h).
#include "tests/fakekube/server/admission.h"

#include "tests/fakekube/server/base64.h"
#include "tests/fakekube/server/json_fields.h"

namespace edl::fakekube {
namespace {

// Burstable, Guaranteed or BestEffort (pkg/apis/core/helper/qos).
std::string QosClass(const Json& spec) {
  bool any = false;
  bool guaranteed = true;
  for (const Json& c : spec["containers"]) {
    Json resources = ObjectAt(c, "resources");
    Json requests = ObjectAt(resources, "requests");
    Json limits = ObjectAt(resources, "limits");
    if (!requests.empty() || !limits.empty()) any = true;
    for (const char* r : {"cpu", "memory"}) {
      if (!limits.contains(r)) {
        guaranteed = false;
      } else if (requests.contains(r) && requests[r] != limits[r]) {
        guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

void DefaultPod(Json& pod) {
  Json& spec = pod["spec"];
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("terminationGracePeriodSeconds")) {
    spec["terminationGracePeriodSeconds"] = 30;
  }
  if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
  if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
  if (!spec.contains("serviceAccountName")) spec["serviceAccountName"] = "default";
  spec["serviceAccount"] = spec["serviceAccountName"];
  if (!spec.contains("securityContext")) spec["securityContext"] = Json::object();
  if (!spec.contains("enableServiceLinks")) spec["enableServiceLinks"] = true;
  for (Json& c : spec["containers"]) {
    if (!c.contains("terminationMessagePath")) {
      c["terminationMessagePath"] = "/dev/termination-log";
    }
    if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
    if (!c.contains("resources")) c["resources"] = Json::object();
    if (!c.contains("imagePullPolicy")) {
      std::string image = c["image"].get<std::string>();
      size_t slash = image.rfind('/');
      std::string last = image.substr(slash == std::string::npos ? 0 : slash + 1);
      size_t colon = last.find(':');
      bool latest = image.find('@') == std::string::npos &&
                    (colon == std::string::npos || last.substr(colon + 1) == "latest");
      c["imagePullPolicy"] = latest ? "Always" : "IfNotPresent";
    }
    if (c.contains("ports")) {
      for (Json& p : c["ports"]) {
        if (!p.contains("protocol")) p["protocol"] = "TCP";
      }
    }
  }
  // DefaultTolerationSeconds admission.
  Json tolerations = spec.value("tolerations", Json::array());
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    bool present = false;
    for (const Json& t : tolerations) present |= t.value("key", "") == key;
    if (!present) {
      tolerations.push_back({{"key", key},
                             {"operator", "Exists"},
                             {"effect", "NoExecute"},
                             {"tolerationSeconds", 300}});
    }
  }
  spec["tolerations"] = tolerations;
  // PrepareForCreate: the status is the server's, whatever the client sent.
  pod["status"] = {{"phase", "Pending"}, {"qosClass", QosClass(spec)}};
}

void DefaultService(Json& service, const AdmissionContext& context) {
  Json& spec = service["spec"];
  if (!spec.contains("type")) spec["type"] = "ClusterIP";
  if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
  std::string ip = StringAt(spec, "clusterIP");
  if (ip.empty()) ip = context.allocate_cluster_ip();
  spec["clusterIP"] = ip;
  spec["clusterIPs"] = Json::array({ip});
  if (ip != "None" || !spec.contains("ipFamilies")) spec["ipFamilies"] = {"IPv4"};
  if (!spec.contains("ipFamilyPolicy")) spec["ipFamilyPolicy"] = "SingleStack";
  if (!spec.contains("internalTrafficPolicy")) spec["internalTrafficPolicy"] = "Cluster";
  if (spec.contains("ports")) {
    for (Json& p : spec["ports"]) {
      if (!p.contains("protocol")) p["protocol"] = "TCP";
      if (!p.contains("targetPort")) p["targetPort"] = p["port"];
    }
  }
  service["status"] = {{"loadBalancer", Json::object()}};
}

}  // namespace

std::optional<ApiError> Admit(const ResourceInfo& resource, Json& object,
                              const AdmissionContext& context) {
  if (resource.name != "pods") return std::nullopt;
  if (!object.contains("spec") || !object["spec"].is_object()) {
    return std::nullopt;  // validation reports it
  }
  Json& spec = object["spec"];
  const std::string name = StringAt(object["metadata"], "name");
  std::string class_name = StringAt(spec, "priorityClassName");
  int64_t priority = 0;
  std::string policy = "PreemptLowerPriority";
  const Json* pc = nullptr;
  if (!class_name.empty()) {
    pc = context.find_priority_class(class_name);
    if (!pc) {
      return ForbiddenError("pods", name,
                            "no PriorityClass with name " + class_name + " was found");
    }
  } else if ((pc = context.default_priority_class())) {
    spec["priorityClassName"] = (*pc)["metadata"]["name"];
  }
  if (pc) {
    priority = pc->value("value", int64_t{0});
    policy = pc->value("preemptionPolicy", std::string("PreemptLowerPriority"));
  }
  if (spec.contains("priority") && spec["priority"].is_number_integer() &&
      spec["priority"].get<int64_t>() != priority) {
    return ForbiddenError(
        "pods", name,
        "the integer value of priority (" + std::to_string(spec["priority"].get<int64_t>()) +
            ") must not be provided in pod spec; priority admission controller computed " +
            std::to_string(priority) + " from the given PriorityClass name");
  }
  if (spec.contains("preemptionPolicy") && spec["preemptionPolicy"] != policy) {
    return ForbiddenError(
        "pods", name,
        "the string value of PreemptionPolicy (" + StringAt(spec, "preemptionPolicy") +
            ") must not be provided in pod spec; priority admission controller computed " + policy +
            " from the given PriorityClass name");
  }
  spec["priority"] = priority;
  spec["preemptionPolicy"] = policy;
  return std::nullopt;
}

void ApplyCreateDefaults(const ResourceInfo& resource, Json& object,
                         const AdmissionContext& context) {
  if (resource.name == "pods") DefaultPod(object);
  if (resource.name == "services") DefaultService(object, context);
  if (resource.name == "jobs") {
    // As the registry's strategy: counts, the generated selector, and the
    // template's labels that match it.
    Json& spec = object["spec"];
    const std::string uid = object["metadata"].value("uid", "");
    const std::string name = object["metadata"].value("name", "");
    if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
    spec["parallelism"] = 1;
    spec["completions"] = 1;
    if (!spec.contains("completionMode")) spec["completionMode"] = "NonIndexed";
    if (!spec.contains("suspend")) spec["suspend"] = false;
    spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
    Json& labels = spec["template"]["metadata"]["labels"];
    labels["batch.kubernetes.io/controller-uid"] = uid;
    labels["batch.kubernetes.io/job-name"] = name;
    labels["controller-uid"] = uid;
    labels["job-name"] = name;
    object["status"] = Json::object();
  }
  if (resource.name == "secrets") {
    if (!object.contains("type")) object["type"] = "Opaque";
    if (object.contains("stringData") && object["stringData"].is_object()) {
      for (auto& [key, value] : object["stringData"].items()) {
        if (value.is_string()) {
          object["data"][key] = Base64Encode(value.get<std::string>());
        }
      }
      object.erase("stringData");
    }
  }
  if (resource.name == "namespaces") {
    object["metadata"]["labels"]["kubernetes.io/metadata.name"] = object["metadata"]["name"];
    object["spec"] = {{"finalizers", {"kubernetes"}}};
    object["status"] = {{"phase", "Active"}};
  }
  if (resource.name == "priorityclasses" && !object.contains("preemptionPolicy")) {
    object["preemptionPolicy"] = "PreemptLowerPriority";
  }
}

}  // namespace edl::fakekube
