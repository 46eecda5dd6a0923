// AuditLog: the requests the fake API server answered, as kube-apiserver's
// audit log records them at level Metadata: who (user and groups, user
// agent), what (RequestAttributes: verb, API group, resource, subresource,
// namespace, name; the request URI) and the HTTP code of the answer (for a
// watch or a followed log, of its response header). Unauthenticated
// requests are recorded with an empty user; the test hooks are not.
//
// Tests derive from it what an identity needs (tests/fakekube/rbac_grants.h).
// Keeps the newest kMaxEvents in memory. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "tests/fakekube/server/identity.h"
#include "tests/fakekube/server/request_attributes.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

struct AuditEvent {
  UserInfo user;
  std::string user_agent;
  std::string request_uri;
  RequestAttributes request;
  int code = 0;

  // An audit.k8s.io/v1 Event: level, stage, requestURI, verb, user
  // {username, groups}, userAgent, objectRef {apiGroup, resource,
  // subresource, namespace, name} (resource requests only),
  // responseStatus {code}.
  Json ToJson() const;
};

class AuditLog {
 public:
  static constexpr size_t kMaxEvents = 200000;

  void Record(AuditEvent event);
  // The events of `user` ("" = everyone's), oldest first.
  std::vector<AuditEvent> Events(const std::string& user = "") const;
  // An audit.k8s.io/v1 EventList of Events(user).
  Json ToEventList(const std::string& user = "") const;
  // Events dropped to stay within kMaxEvents.
  int64_t dropped() const;

 private:
  mutable std::mutex mu_;  // guards events_ and dropped_
  std::deque<AuditEvent> events_;
  int64_t dropped_ = 0;
};

}  // namespace edl::fakekube
