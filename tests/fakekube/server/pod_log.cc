// Pod log requests (see pod_log.h).
#include "tests/fakekube/server/pod_log.h"

#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {
namespace {

Json ContainerStatus(const Json& pod, const std::string& container) {
  if (!pod.contains("status") || !pod["status"].is_object()) return Json();
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    for (const Json& s : pod["status"].value(list, Json::array())) {
      if (s.value("name", "") == container) return s;
    }
  }
  return Json();
}

bool HasState(const Json& status, const char* field, const char* state) {
  return status.is_object() && status.contains(field) && status[field].is_object() &&
         status[field].contains(state);
}

}  // namespace

ApiResult<Json> PodForLog(const Store& store, const std::string& ns, const std::string& name,
                          LogOptions& options) {
  ApiResult<Json> pod = store.Get("pods", ns, name);
  if (!pod.ok()) return pod;
  const Json& spec = (*pod.value)["spec"];
  std::vector<std::string> names;
  for (const char* list : {"containers", "initContainers"}) {
    for (const Json& c : spec.value(list, Json::array())) names.push_back(c.value("name", ""));
  }
  const size_t regular = spec.value("containers", Json::array()).size();
  if (options.container.empty()) {
    if (regular != 1) {
      std::string choices;
      for (size_t i = 0; i < regular; ++i) choices += (i ? " " : "") + names[i];
      return ApiResult<Json>::Err(BadRequest("a container name must be specified for pod " + name +
                                             ", choose one of: [" + choices + "]"));
    }
    options.container = names[0];
  }
  bool known = false;
  for (const std::string& n : names) known |= n == options.container;
  if (!known) {
    return ApiResult<Json>::Err(
        BadRequest("container " + options.container + " is not valid for pod " + name));
  }
  Json status = ContainerStatus(*pod.value, options.container);
  bool started = HasState(status, "state", "running") || HasState(status, "state", "terminated") ||
                 HasState(status, "lastState", "terminated");
  if (!started) {
    std::string reason = "ContainerCreating";
    if (HasState(status, "state", "waiting")) {
      reason = status["state"]["waiting"].value("reason", reason);
    }
    return ApiResult<Json>::Err(BadRequest("container \"" + options.container + "\" in pod \"" +
                                           name + "\" is waiting to start: " + reason));
  }
  return pod;
}

std::string TailLines(const std::string& text, std::optional<int64_t> tail_lines) {
  if (!tail_lines || *tail_lines < 0) return text;
  if (*tail_lines == 0) return "";
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;  // the final newline ends the last line
  int64_t lines = 0;
  size_t pos = end;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++lines == *tail_lines) break;
    --pos;
  }
  return text.substr(pos);
}

bool LogFinished(const Json& pod, const std::string& container) {
  std::string phase =
      pod.contains("status") && pod["status"].is_object() ? pod["status"].value("phase", "") : "";
  if (phase == "Succeeded" || phase == "Failed") return true;
  return HasState(ContainerStatus(pod, container), "state", "terminated");
}

}  // namespace edl::fakekube
