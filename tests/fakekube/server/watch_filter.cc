// Watch event filtering and rendering (see watch_filter.h).
#include "tests/fakekube/server/watch_filter.h"

namespace edl::fakekube {
namespace {

std::string Line(const std::string& type, const Json& object) {
  return Json{{"type", type}, {"object", object}}.dump() + "\n";
}

}  // namespace

WatchFilter::WatchFilter(const ResourceInfo& resource, std::string ns,
                         std::shared_ptr<const LabelSelector> labels, FieldSelector fields)
    : resource_(resource),
      ns_(std::move(ns)),
      labels_(std::move(labels)),
      fields_(std::move(fields)) {}

bool WatchFilter::Matches(const Json& object) const {
  if (!object.is_object() || !object.contains("metadata")) return false;
  const Json& meta = object["metadata"];
  if (!ns_.empty() && meta.value("namespace", "") != ns_) return false;
  if (labels_ && !fakekube::Matches(*labels_, meta.value("labels", Json::object()))) {
    return false;
  }
  return MatchesFields(fields_, object);
}

std::optional<std::string> WatchFilter::Translate(const WatchEvent& event) const {
  if (event.resource != resource_.name) return std::nullopt;
  const bool now = Matches(event.object);
  if (event.type == "MODIFIED" && event.previous.is_object()) {
    const bool before = Matches(event.previous);
    if (now && before) return Line("MODIFIED", event.object);
    if (now) return Line("ADDED", event.object);
    if (before) {
      Json last = event.previous;
      last["metadata"]["resourceVersion"] = std::to_string(event.resource_version);
      return Line("DELETED", last);
    }
    return std::nullopt;
  }
  if (!now) return std::nullopt;
  return Line(event.type, event.object);
}

std::string WatchFilter::AddedLine(Json item) const {
  item["kind"] = resource_.kind;
  item["apiVersion"] = resource_.api_version();
  return Line("ADDED", item);
}

std::string WatchFilter::BookmarkLine(uint64_t resource_version) const {
  Json object = {
      {"kind", resource_.kind},
      {"apiVersion", resource_.api_version()},
      {"metadata",
       {{"resourceVersion", std::to_string(resource_version)}, {"creationTimestamp", nullptr}}}};
  if (resource_.name == "pods") {
    object["spec"] = {{"containers", nullptr}};
    object["status"] = Json::object();
  }
  return Line("BOOKMARK", object);
}

std::string ErrorLine(const ApiError& error) { return Line("ERROR", error.ToStatus()); }

}  // namespace edl::fakekube
