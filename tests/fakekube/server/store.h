// Store: the fake API server's object storage (an in-memory etcd plus the
// registry rules of kube-apiserver that every writer must share). The HTTP
// front end (api_server.cc), the scheduler, the kubelet, the kube-proxy and
// the garbage collector all read and write objects only through it, so a
// change made by any of them is seen by watchers exactly like a change made
// through the API.
//
// Objects are nlohmann::json in the v1 wire form. Resources are the plural
// lower-case names used in URLs: "pods", "services", "configmaps",
// "secrets", "events" (namespaced) and "priorityclasses", "nodes",
// "namespaces" (cluster-scoped: ns is "").
//
// Resource versions come from one counter seeded from the wall clock
// (microseconds since the epoch) so that a restarted fake never hands out a
// version a client already holds; they are rendered as decimal strings and
// bumped on every write. A bounded history of events (history_limit) serves
// watches from a resource version; older ones are answered with 410
// Expired.
//
// Thread-safe. Watch callbacks run on a writer's thread (one thread at a
// time, in resource-version order), after the write is committed and
// outside the store's lock; they must not block, and may write to the
// store (that event is then delivered after the current callback returns).
// Garbage collection (gc.h) runs synchronously after the writes that may
// need it, so a DELETE of an owner returns after its dependents were
// deleted (pods: marked for graceful deletion).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::fakekube {

using Json = nlohmann::json;

// A Kubernetes error as the API reports it: HTTP code, reason and the exact
// message of apimachinery's errors.go, plus details (name, kind, causes).
struct ApiError {
  int code = 500;
  std::string reason;   // "NotFound", "AlreadyExists", "Conflict", "Invalid", ...
  std::string message;  // `pods "x" not found`
  Json details = Json::object();
  Json ToStatus() const;  // the v1 Status object
};

template <typename T>
struct ApiResult {
  std::optional<T> value;
  ApiError error;
  bool ok() const { return value.has_value(); }
  static ApiResult Ok(T v) { return ApiResult{std::move(v), {}}; }
  static ApiResult Err(ApiError e) { return ApiResult{std::nullopt, std::move(e)}; }
};

struct WatchEvent {
  std::string type;  // ADDED MODIFIED DELETED
  std::string resource;
  Json object;  // with kind and apiVersion
  uint64_t resource_version = 0;
  // MODIFIED: the object before the change (watch selectors turn a change
  // into or out of the selection into ADDED/DELETED); null otherwise.
  Json previous;
};

struct DeleteRequest {
  std::optional<int64_t> grace_period_seconds;  // nullopt: the object's own
  std::string propagation_policy;               // "", Background, Foreground, Orphan
  std::string precondition_uid;
  std::string precondition_resource_version;
};

class Store {
 public:
  struct Options {
    size_t history_limit = 10000;  // events kept for watches from a version
  };
  // Timestamps come from the wall clock (std::chrono::system_clock).
  explicit Store(Options options);
  Store() : Store(Options{}) {}
  ~Store();

  // Create with the real server's defaults and checks: metadata.name or
  // generateName (5 random [a-z0-9] appended), namespace must match `ns`
  // (400 BadRequest otherwise), uid, resourceVersion, creationTimestamp,
  // 409 AlreadyExists, 422 Invalid for missing required fields (pods need
  // spec.containers with name and image), pod defaults (restartPolicy
  // Always, terminationGracePeriodSeconds 30, dnsPolicy, schedulerName,
  // status.phase Pending, priority from spec.priorityClassName through the
  // priorityclasses resource: 403 `no PriorityClass with name X was found`),
  // service defaults (type ClusterIP, clusterIP allocated from the fake's
  // loopback service range (a LoopbackBlock) unless "None", targetPort = port).
  ApiResult<Json> Create(const std::string& resource, const std::string& ns, Json object);
  ApiResult<Json> Get(const std::string& resource, const std::string& ns,
                      const std::string& name) const;

  // Items (without kind/apiVersion) whose labels and fields match, and the
  // list's resource version. ns "" lists every namespace. Selectors use the
  // real grammar; an unsupported field label is 400 `field label not
  // supported: X`.
  struct ListResult {
    std::vector<Json> items;
    uint64_t resource_version = 0;
  };
  ApiResult<ListResult> List(const std::string& resource, const std::string& ns,
                             const std::string& label_selector,
                             const std::string& field_selector) const;

  // Read-modify-write: `mutate` edits the stored object (a copy); the
  // result is stored with a new resourceVersion and watchers see MODIFIED.
  // metadata.name/namespace/uid/creationTimestamp cannot be changed by it
  // (nor resourceVersion, deletionTimestamp, deletionGracePeriodSeconds).
  // A mutation that changes nothing writes nothing (no version, no event);
  // one that drops the last finalizer of an object marked for deletion
  // (pods: once their grace is 0) removes it (DELETED). 404 if absent.
  ApiResult<Json> Update(const std::string& resource, const std::string& ns,
                         const std::string& name, const std::function<void(Json&)>& mutate);

  // DELETE as kube-apiserver does it: for pods, grace
  // defaults to terminationGracePeriodSeconds, forced to 0 when unscheduled
  // (no spec.nodeName) or terminal; grace > 0 sets deletionTimestamp (now +
  // grace) and deletionGracePeriodSeconds and returns the pod (MODIFIED);
  // grace 0 removes it at once (DELETED) and returns the last pod. Other
  // resources are removed at once and the result is the Success Status
  // with details {name, kind: resource, uid}. Preconditions mismatch: 409.
  // Foreground keeps the owner with finalizer foregroundDeletion until its
  // blockOwnerDeletion dependents are gone; Orphan strips ownerReferences
  // from dependents.
  ApiResult<Json> Delete(const std::string& resource, const std::string& ns,
                         const std::string& name, const DeleteRequest& request);
  // Final removal (the kubelet, after the containers are gone): DELETED.
  ApiResult<Json> Remove(const std::string& resource, const std::string& ns,
                         const std::string& name);

  // Watching. Subscribe delivers every future event (all resources); the
  // returned id unsubscribes. EventsSince returns the kept events after
  // `resource_version` (exclusive) for `resource`, or 410 Expired
  // (`too old resource version: N (M)`) when the history no longer reaches
  // back that far.
  using Callback = std::function<void(const WatchEvent&)>;
  uint64_t Subscribe(Callback callback);
  void Unsubscribe(uint64_t id);
  ApiResult<std::vector<WatchEvent>> EventsSince(const std::string& resource,
                                                 uint64_t resource_version) const;
  uint64_t CurrentResourceVersion() const;

  // Pod logs: the kubelet appends a pod's output, pods/log reads it. Keyed
  // by pod uid.
  void AppendLog(const std::string& uid, const std::string& bytes);
  std::string Log(const std::string& uid) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// RFC 3339 UTC with seconds ("2026-11-21T05:17:31Z"); seconds since the Unix epoch.
std::string Rfc3339(double seconds_since_epoch);

// Label selector / field matching, exposed for the scheduler and tests.
// ParseLabelSelector errors name the offending term.
struct LabelSelector;
Result<std::shared_ptr<const LabelSelector>> ParseLabelSelector(const std::string& text);
bool Matches(const LabelSelector& selector, const Json& labels);

}  // namespace edl::fakekube
