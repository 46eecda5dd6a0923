// The audit log (see audit_log.h).
#include "tests/fakekube/server/audit_log.h"

namespace edl::fakekube {

Json AuditEvent::ToJson() const {
  Json event = {{"kind", "Event"},
                {"apiVersion", "audit.k8s.io/v1"},
                {"level", "Metadata"},
                {"stage", "ResponseComplete"},
                {"requestURI", request_uri},
                {"verb", request.verb},
                {"user", {{"username", user.name}, {"groups", user.groups}}},
                {"userAgent", user_agent},
                {"responseStatus", {{"metadata", Json::object()}, {"code", code}}}};
  if (request.resource_request) {
    Json ref = {{"resource", request.resource}, {"apiGroup", request.api_group}};
    if (!request.subresource.empty()) ref["subresource"] = request.subresource;
    if (!request.ns.empty()) ref["namespace"] = request.ns;
    if (!request.name.empty()) ref["name"] = request.name;
    event["objectRef"] = ref;
  }
  return event;
}

void AuditLog::Record(AuditEvent event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.size() >= kMaxEvents) {
    events_.pop_front();
    ++dropped_;
  }
  events_.push_back(std::move(event));
}

std::vector<AuditEvent> AuditLog::Events(const std::string& user) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<AuditEvent> events;
  for (const AuditEvent& e : events_) {
    if (user.empty() || e.user.name == user) events.push_back(e);
  }
  return events;
}

Json AuditLog::ToEventList(const std::string& user) const {
  Json items = Json::array();
  for (const AuditEvent& e : Events(user)) items.push_back(e.ToJson());
  return {{"kind", "EventList"},
          {"apiVersion", "audit.k8s.io/v1"},
          {"metadata", Json::object()},
          {"items", std::move(items)}};
}

int64_t AuditLog::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

}  // namespace edl::fakekube
