// Store: creating, reading, listing and updating objects (see store.h).
#include "tests/fakekube/server/admission.h"
#include "tests/fakekube/server/field_selector.h"
#include "tests/fakekube/server/store_impl.h"
#include "tests/fakekube/server/validation.h"

namespace edl::fakekube {

using store_internal::Finalizers;
using store_internal::kAllNamespaces;
using store_internal::Key;
using store_internal::Meta;
using store_internal::MetaString;
using store_internal::NowSeconds;
using store_internal::UnknownResource;

ApiResult<Json> Store::Create(const std::string& resource, const std::string& ns, Json object) {
  const ResourceInfo* info = FindResource(resource);
  if (!info) return ApiResult<Json>::Err(UnknownResource());
  if (!object.is_object()) {
    return ApiResult<Json>::Err(BadRequest("the body of the request must be a JSON object"));
  }
  Json created;
  try {
    if (!object.contains("metadata")) object["metadata"] = Json::object();
    Json& meta = object["metadata"];
    if (!meta.is_object()) return ApiResult<Json>::Err(BadRequest("metadata must be an object"));
    std::string object_ns = MetaString(object, "namespace");
    if (info->namespaced) {
      if (ns.empty()) {
        return ApiResult<Json>::Err(BadRequest("a namespace is required to create " + resource));
      }
      if (!object_ns.empty() && object_ns != ns) {
        return ApiResult<Json>::Err(
            BadRequest("the namespace of the provided object does not match the namespace sent on "
                       "the request"));
      }
      meta["namespace"] = ns;
    } else {
      meta.erase("namespace");
    }
    if (!MetaString(object, "resourceVersion").empty()) {
      return ApiResult<Json>::Err(
          InternalApiError("resourceVersion should not be set on objects to be created"));
    }
    for (const char* key : {"uid", "creationTimestamp", "deletionTimestamp",
                            "deletionGracePeriodSeconds", "selfLink", "managedFields"}) {
      meta.erase(key);
    }

    std::unique_lock<std::mutex> lock(impl_->mu);
    auto& classes = impl_->objects["priorityclasses"];
    AdmissionContext context;
    context.find_priority_class = [&](const std::string& name) -> const Json* {
      auto it = classes.find(Key("", name));
      return it == classes.end() ? nullptr : &it->second;
    };
    context.default_priority_class = [&]() -> const Json* {
      for (auto& [key, pc] : classes) {
        if (pc.value("globalDefault", false)) return &pc;
      }
      return nullptr;
    };
    context.allocate_cluster_ip = [&] {
      uint32_t n = impl_->next_cluster_ip++;
      // The fake's service CIDR is a loopback /16 of its own so that its
      // kube-proxy can listen on every clusterIP of this machine.
      return impl_->cluster_ips.prefix() + std::to_string(n / 256 % 256) + "." +
             std::to_string(n % 256);
    };
    if (auto error = Admit(*info, object, context)) return ApiResult<Json>::Err(*error);
    auto& table = impl_->objects[resource];
    const std::string target_ns = info->namespaced ? ns : "";
    std::string name = MetaString(object, "name");
    if (name.empty() && !MetaString(object, "generateName").empty()) {
      static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
      do {
        name = MetaString(object, "generateName");
        for (int i = 0; i < 5; ++i) name += kAlphabet[impl_->random() % 27];
      } while (table.count(Key(target_ns, name)));
      meta["name"] = name;
    }
    if (auto error = ValidateObject(*info, object)) return ApiResult<Json>::Err(*error);
    if (table.count(Key(target_ns, name))) {
      return ApiResult<Json>::Err(AlreadyExistsError(resource, name));
    }
    meta["uid"] = impl_->NewUid();  // first: a Job's defaults name it
    ApplyCreateDefaults(*info, object, context);
    meta["creationTimestamp"] = Rfc3339(NowSeconds());
    impl_->Record("ADDED", resource, object);
    created = object;
    table.emplace(Key(target_ns, name), std::move(object));
  } catch (const Json::exception& e) {
    return ApiResult<Json>::Err(BadRequest(std::string("malformed object: ") + e.what()));
  }
  impl_->AfterWrite();
  return ApiResult<Json>::Ok(std::move(created));
}

ApiResult<Json> Store::Get(const std::string& resource, const std::string& ns,
                           const std::string& name) const {
  const ResourceInfo* info = FindResource(resource);
  if (!info) return ApiResult<Json>::Err(UnknownResource());
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto table = impl_->objects.find(resource);
  if (table != impl_->objects.end()) {
    auto it = table->second.find(Key(info->namespaced ? ns : "", name));
    if (it != table->second.end()) return ApiResult<Json>::Ok(it->second);
  }
  return ApiResult<Json>::Err(NotFoundError(resource, name));
}

ApiResult<Store::ListResult> Store::List(const std::string& resource, const std::string& ns,
                                         const std::string& label_selector,
                                         const std::string& field_selector) const {
  const ResourceInfo* info = FindResource(resource);
  if (!info) return ApiResult<ListResult>::Err(UnknownResource());
  auto labels = ParseLabelSelector(label_selector);
  if (!labels.ok()) return ApiResult<ListResult>::Err(BadRequest(labels.status().message()));
  auto fields = ParseFieldSelector(*info, field_selector);
  if (!fields.ok()) return ApiResult<ListResult>::Err(fields.error);
  ListResult result;
  std::lock_guard<std::mutex> lock(impl_->mu);
  result.resource_version = impl_->rv;
  auto table = impl_->objects.find(resource);
  if (table == impl_->objects.end()) return ApiResult<ListResult>::Ok(std::move(result));
  for (const auto& [key, object] : table->second) {
    if (info->namespaced && !ns.empty() && MetaString(object, "namespace") != ns) continue;
    if (!Matches(**labels, Meta(object).value("labels", Json::object()))) continue;
    if (!MatchesFields(*fields.value, object)) continue;
    Json item = object;
    item.erase("kind");
    item.erase("apiVersion");
    result.items.push_back(std::move(item));
  }
  return ApiResult<ListResult>::Ok(std::move(result));
}

ApiResult<Json> Store::Update(const std::string& resource, const std::string& ns,
                              const std::string& name, const std::function<void(Json&)>& mutate) {
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
    Json updated = stored;
    try {
      mutate(updated);
      if (!updated.is_object()) updated = stored;
      if (!updated["metadata"].is_object()) updated["metadata"] = Meta(stored);
      // Identity is the server's; a deletion, once set, is changed only by
      // Delete.
      for (const char* key : {"name", "namespace", "uid", "creationTimestamp", "resourceVersion",
                              "deletionTimestamp", "deletionGracePeriodSeconds"}) {
        if (Meta(stored).contains(key)) {
          updated["metadata"][key] = Meta(stored)[key];
        } else {
          updated["metadata"].erase(key);
        }
      }
      updated["kind"] = stored["kind"];
      updated["apiVersion"] = stored["apiVersion"];
    } catch (const Json::exception& e) {
      return ApiResult<Json>::Err(BadRequest(std::string("malformed object: ") + e.what()));
    }
    if (updated == stored) return ApiResult<Json>::Ok(stored);  // no-op: no new version
    if (impl_->ReadyToErase(*info, updated)) {
      stored = updated;
      result = impl_->EraseLocked(*info, key);
    } else {
      Json previous = stored;
      impl_->Record("MODIFIED", resource, updated, std::move(previous));
      stored = updated;
      result = updated;
    }
  }
  impl_->AfterWrite();
  return ApiResult<Json>::Ok(std::move(result));
}

}  // namespace edl::fakekube
