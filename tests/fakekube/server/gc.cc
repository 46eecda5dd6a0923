// Garbage collection of dependents (see gc.h).
#include "tests/fakekube/server/gc.h"

#include <map>
#include <set>
#include <vector>

#include "tests/fakekube/server/resources.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {
namespace {

constexpr char kForeground[] = "foregroundDeletion";

struct Entry {
  std::string resource;
  Json object;
  std::string ns() const { return object["metadata"].value("namespace", ""); }
  std::string name() const { return object["metadata"].value("name", ""); }
  std::string uid() const { return object["metadata"].value("uid", ""); }
  bool terminating() const { return object["metadata"].contains("deletionTimestamp"); }
  Json refs() const { return object["metadata"].value("ownerReferences", Json::array()); }
};

bool HasFinalizer(const Json& object, const std::string& finalizer) {
  for (const Json& f : object["metadata"].value("finalizers", Json::array())) {
    if (f == finalizer) return true;
  }
  return false;
}

}  // namespace

void GarbageCollector::Collect(const std::string& ns) {
  std::vector<Entry> entries;  // namespaced objects in scope
  std::set<std::string> cluster_uids;
  std::map<std::string, std::set<std::string>> uids_by_ns;
  for (const ResourceInfo& r : AllResources()) {
    auto list = store_.List(r.name, r.namespaced ? ns : "", "", "");
    if (!list.ok()) continue;
    for (Json& item : list.value->items) {
      Entry e{r.name, std::move(item)};
      if (r.namespaced) {
        uids_by_ns[e.ns()].insert(e.uid());
      } else {
        cluster_uids.insert(e.uid());
      }
      entries.push_back(std::move(e));
    }
  }
  auto delete_dependent = [&](const Entry& e) {
    DeleteRequest request;
    request.propagation_policy = "Background";
    request.precondition_uid = e.uid();
    (void)store_.Delete(e.resource, e.ns(), e.name(), request);
  };
  // Dependents whose every owner is gone.
  for (const Entry& e : entries) {
    Json refs = e.refs();
    if (refs.empty() || e.terminating() || e.ns().empty()) continue;
    const std::set<std::string>& here = uids_by_ns[e.ns()];
    bool any_owner = false;
    for (const Json& ref : refs) {
      std::string uid = ref.value("uid", "");
      any_owner |= here.count(uid) > 0 || cluster_uids.count(uid) > 0;
    }
    if (!any_owner) delete_dependent(e);
  }
  // Owners waiting in foreground deletion.
  for (const Entry& owner : entries) {
    if (!owner.terminating() || !HasFinalizer(owner.object, kForeground)) continue;
    bool blocked = false;
    for (const Entry& e : entries) {
      if (e.ns() != owner.ns() && !owner.ns().empty()) continue;
      for (const Json& ref : e.refs()) {
        if (ref.value("uid", "") != owner.uid()) continue;
        // Dependents deleted during this pass may be gone already; a
        // blocking one is waited for until the next pass sees it gone.
        if (!e.terminating()) delete_dependent(e);
        if (ref.value("blockOwnerDeletion", false)) {
          blocked |= store_.Get(e.resource, e.ns(), e.name()).ok();
        }
      }
    }
    if (blocked) continue;
    const std::string uid = owner.uid();
    (void)store_.Update(owner.resource, owner.ns(), owner.name(), [&](Json& object) {
      if (object["metadata"].value("uid", "") != uid) return;
      Json kept = Json::array();
      for (const Json& f : object["metadata"].value("finalizers", Json::array())) {
        if (f != kForeground) kept.push_back(f);
      }
      if (kept.empty()) {
        object["metadata"].erase("finalizers");
      } else {
        object["metadata"]["finalizers"] = kept;
      }
    });
  }
}

}  // namespace edl::fakekube
