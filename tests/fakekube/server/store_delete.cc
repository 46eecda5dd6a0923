// Store: deletion as kube-apiserver's registry does it:
// grace periods, preconditions, finalizers and propagation policies.
#include "tests/fakekube/server/store_impl.h"

namespace edl::fakekube {
namespace {

using store_internal::Finalizers;
using store_internal::kAllNamespaces;
using store_internal::Key;
using store_internal::Meta;
using store_internal::MetaString;
using store_internal::NowSeconds;
using store_internal::UnknownResource;

bool IsTerminalPod(const Json& pod) {
  std::string phase =
      pod.contains("status") && pod["status"].is_object() ? pod["status"].value("phase", "") : "";
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

Json Store::Impl::EraseLocked(const ResourceInfo& info, const std::string& key) {
  auto& table = objects[info.name];
  auto it = table.find(key);
  Json last = std::move(it->second);
  table.erase(it);
  Record("DELETED", info.name, last);
  return last;
}

bool Store::Impl::ReadyToErase(const ResourceInfo& info, const Json& object) const {
  const Json& meta = Meta(object);
  if (!meta.contains("deletionTimestamp") || !Finalizers(object).empty()) return false;
  return info.name != "pods" || meta.value("deletionGracePeriodSeconds", int64_t{1}) == 0;
}

ApiResult<Json> Store::Delete(const std::string& resource, const std::string& ns,
                              const std::string& name, const DeleteRequest& request) {
  const ResourceInfo* info = FindResource(resource);
  if (!info) return ApiResult<Json>::Err(UnknownResource());
  const std::string& policy = request.propagation_policy;
  if (!policy.empty() && policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return ApiResult<Json>::Err(InvalidError(
        "DeleteOptions", "",
        {FieldError{"FieldValueNotSupported", "propagationPolicy",
                    "supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
                    Json(policy).dump()}}));
  }
  Json result;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto& table = impl_->objects[resource];
    const std::string key = Key(info->namespaced ? ns : "", name);
    auto it = table.find(key);
    if (it == table.end()) return ApiResult<Json>::Err(NotFoundError(resource, name));
    Json& stored = it->second;
    const std::string uid = MetaString(stored, "uid");
    const std::string rv = MetaString(stored, "resourceVersion");
    if (!request.precondition_uid.empty() && request.precondition_uid != uid) {
      return ApiResult<Json>::Err(
          ConflictError(resource, name,
                        "Precondition failed: UID in precondition: " + request.precondition_uid +
                            ", UID in object meta: " + uid));
    }
    if (!request.precondition_resource_version.empty() &&
        request.precondition_resource_version != rv) {
      return ApiResult<Json>::Err(ConflictError(
          resource, name,
          "Precondition failed: ResourceVersion in precondition: " +
              request.precondition_resource_version + ", ResourceVersion in object meta: " + rv));
    }
    int64_t grace = 0;
    if (resource == "pods") {
      grace = request.grace_period_seconds.value_or(
          stored["spec"].value("terminationGracePeriodSeconds", int64_t{30}));
      if (grace < 0) grace = 1;
      if (stored["spec"].value("nodeName", "").empty() || IsTerminalPod(stored)) grace = 0;
    }
    if (policy == "Orphan" && info->namespaced) {
      // The real GC strips the references before the owner goes; do it now.
      for (auto& [dep_resource, dep_table] : impl_->objects) {
        for (auto& [dep_key, dependent] : dep_table) {
          if (MetaString(dependent, "namespace") != ns) continue;
          Json refs = Meta(dependent).value("ownerReferences", Json::array());
          Json kept = Json::array();
          for (const Json& ref : refs) {
            if (ref.value("uid", "") != uid) kept.push_back(ref);
          }
          if (kept.size() == refs.size()) continue;
          Json previous = dependent;
          if (kept.empty()) {
            dependent["metadata"].erase("ownerReferences");
          } else {
            dependent["metadata"]["ownerReferences"] = kept;
          }
          impl_->Record("MODIFIED", dep_resource, dependent, std::move(previous));
        }
      }
    }
    Json updated = stored;
    Json& meta = updated["metadata"];
    if (policy == "Foreground") {
      Json finalizers = Finalizers(updated);
      bool present = false;
      for (const Json& f : finalizers) present |= f == "foregroundDeletion";
      if (!present) finalizers.push_back("foregroundDeletion");
      meta["finalizers"] = finalizers;
    }
    const bool has_finalizers = !Finalizers(updated).empty();
    if (grace > 0 || has_finalizers) {
      // Graceful deletion, or deletion pending on finalizers: mark only.
      const double deadline = NowSeconds() + static_cast<double>(grace);
      const int64_t old_grace = meta.value("deletionGracePeriodSeconds", int64_t{-1});
      if (!meta.contains("deletionTimestamp") || grace < old_grace) {
        meta["deletionTimestamp"] = Rfc3339(deadline);
        meta["deletionGracePeriodSeconds"] = grace;
      }
      if (updated != stored) {
        Json previous = stored;
        impl_->Record("MODIFIED", resource, updated, std::move(previous));
        stored = updated;
      }
      result = stored;
    } else {
      Json last = impl_->EraseLocked(*info, key);
      if (resource == "pods") {
        result = std::move(last);
      } else {
        result = {{"kind", "Status"},
                  {"apiVersion", "v1"},
                  {"metadata", Json::object()},
                  {"status", "Success"},
                  {"details", {{"name", name}, {"kind", resource}, {"uid", uid}}}};
      }
    }
  }
  impl_->AfterWrite();
  return ApiResult<Json>::Ok(std::move(result));
}

ApiResult<Json> Store::Remove(const std::string& resource, const std::string& ns,
                              const std::string& name) {
  const ResourceInfo* info = FindResource(resource);
  if (!info) return ApiResult<Json>::Err(UnknownResource());
  Json result;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto& table = impl_->objects[resource];
    const std::string key = Key(info->namespaced ? ns : "", name);
    auto it = table.find(key);
    if (it == table.end()) return ApiResult<Json>::Err(NotFoundError(resource, name));
    Json& stored = it->second;
    if (Finalizers(stored).empty()) {
      result = impl_->EraseLocked(*info, key);
    } else {
      // Finalizers hold the object: it waits, marked, until they are gone.
      Json updated = stored;
      if (!Meta(updated).contains("deletionTimestamp")) {
        updated["metadata"]["deletionTimestamp"] = Rfc3339(NowSeconds());
      }
      updated["metadata"]["deletionGracePeriodSeconds"] = 0;
      if (updated != stored) {
        Json previous = stored;
        impl_->Record("MODIFIED", resource, updated, std::move(previous));
        stored = updated;
      }
      result = stored;
    }
  }
  impl_->AfterWrite();
  return ApiResult<Json>::Ok(std::move(result));
}

}  // namespace edl::fakekube
