// CRUD on resource paths (see api_handlers.h).
#include "tests/fakekube/server/api_handlers.h"

#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/pod_log.h"
#include "tests/fakekube/server/validation.h"

namespace edl::fakekube {
namespace {

bool HasStatus(const ResourceInfo& r) {
  for (const std::string& sub : r.subresources) {
    if (sub == "status") return true;
  }
  return false;
}

// The body as a JSON object, or 400 as kube-apiserver words it.
ApiResult<Json> ParseBody(const ApiRequest& request, const ResourceInfo& r) {
  Json body = Json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return ApiResult<Json>::Err(
        BadRequest("the body of the request was in an unknown format - "
                   "accepted media types include: application/json, "
                   "application/yaml, application/vnd.kubernetes.protobuf"));
  }
  if (body.contains("kind") && body["kind"] != r.kind && body["kind"] != "DeleteOptions") {
    std::string kind = body["kind"].is_string() ? body["kind"].get<std::string>() : "";
    return ApiResult<Json>::Err(
        BadRequest(r.kind + " in version \"" + r.version + "\" cannot be handled as a " + r.kind +
                   ": the object kind \"" + kind + "\" does not match " + r.kind));
  }
  return ApiResult<Json>::Ok(std::move(body));
}

ApiResponse Result(const ApiResult<Json>& result, int success_status = 200) {
  if (!result.ok()) return ErrorResponse(result.error);
  return JsonResponse(success_status, *result.value);
}

ApiResponse List(Store& store, const ParsedTarget& target, const ResourcePath& path) {
  const std::string rv = QueryString(target, "resourceVersion");
  if (!rv.empty()) {
    if (rv.find_first_not_of("0123456789") != std::string::npos || rv.size() > 19) {
      return ErrorResponse(BadRequest("invalid resource version \"" + rv + "\""));
    }
    uint64_t wanted = std::stoull(rv);
    uint64_t current = store.CurrentResourceVersion();
    if (wanted > current) {
      return ErrorResponse(TooLargeResourceVersionError(wanted, current));
    }
  }
  auto list = store.List(path.resource->name, path.ns, QueryString(target, "labelSelector"),
                         QueryString(target, "fieldSelector"));
  if (!list.ok()) return ErrorResponse(list.error);
  Json items = Json::array();
  for (Json& item : list.value->items) items.push_back(std::move(item));
  return JsonResponse(
      200, {{"kind", path.resource->list_kind()},
            {"apiVersion", path.resource->api_version()},
            {"metadata", {{"resourceVersion", std::to_string(list.value->resource_version)}}},
            {"items", items}});
}

ApiResponse Create(Store& store, const ApiRequest& request, const ParsedTarget& target,
                   const ResourcePath& path) {
  if (path.resource->namespaced && path.ns.empty()) return ErrorResponse(MethodNotAllowedError());
  auto body = ParseBody(request, *path.resource);
  if (!body.ok()) return ErrorResponse(body.error);
  return Result(store.Create(path.resource->name, path.ns, std::move(*body.value)), 201);
}

DeleteRequest DeleteOptions(const ParsedTarget& target, const Json& body) {
  DeleteRequest d;
  d.grace_period_seconds = QueryInt(target, "gracePeriodSeconds");
  d.propagation_policy = QueryString(target, "propagationPolicy");
  if (target.query.count("orphanDependents") && QueryBool(target, "orphanDependents")) {
    d.propagation_policy = "Orphan";
  }
  if (body.is_object()) {
    if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"].is_number_integer()) {
      d.grace_period_seconds = body["gracePeriodSeconds"].get<int64_t>();
    }
    if (body.contains("propagationPolicy") && body["propagationPolicy"].is_string()) {
      d.propagation_policy = body["propagationPolicy"].get<std::string>();
    }
    if (body.value("orphanDependents", false)) d.propagation_policy = "Orphan";
    if (body.contains("preconditions") && body["preconditions"].is_object()) {
      const Json& p = body["preconditions"];
      if (p.contains("uid") && p["uid"].is_string()) d.precondition_uid = p["uid"];
      if (p.contains("resourceVersion") && p["resourceVersion"].is_string()) {
        d.precondition_resource_version = p["resourceVersion"];
      }
    }
  }
  return d;
}

ApiResponse Delete(Store& store, const ApiRequest& request, const ParsedTarget& target,
                   const ResourcePath& path) {
  Json body;
  if (!request.body.empty()) {
    body = Json::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      return ErrorResponse(BadRequest("the body of the request was in an unknown format"));
    }
  }
  DeleteRequest options = DeleteOptions(target, body);
  if (!path.name.empty()) {
    return Result(store.Delete(path.resource->name, path.ns, path.name, options));
  }
  // deletecollection
  auto list = store.List(path.resource->name, path.ns, QueryString(target, "labelSelector"),
                         QueryString(target, "fieldSelector"));
  if (!list.ok()) return ErrorResponse(list.error);
  Json items = Json::array();
  for (const Json& item : list.value->items) {
    const Json& meta = item["metadata"];
    auto deleted = store.Delete(path.resource->name, meta.value("namespace", ""),
                                meta.value("name", ""), options);
    if (deleted.ok() && deleted.value->value("kind", "") != "Status") {
      items.push_back(*deleted.value);
    }
  }
  return JsonResponse(
      200, {{"kind", path.resource->list_kind()},
            {"apiVersion", path.resource->api_version()},
            {"metadata", {{"resourceVersion", std::to_string(store.CurrentResourceVersion())}}},
            {"items", items}});
}

// PUT and PATCH: `compute` turns the current object into the requested one
// (or fills `error`); the status subresource takes only the new status, the
// main resource keeps the old status and is validated as on create.
ApiResponse Write(Store& store, const ResourcePath& path,
                  const std::function<Json(const Json&, std::optional<ApiError>&)>& compute) {
  std::optional<ApiError> error;
  const std::string resource = path.resource->name;
  const bool status_only = path.subresource == "status";
  const bool keep_status = !status_only && HasStatus(*path.resource);
  auto result = store.Update(resource, path.ns, path.name, [&](Json& current) {
    Json next = compute(current, error);
    if (error) return;
    if (!next.is_object()) {
      error = BadRequest("the request did not produce a JSON object");
      return;
    }
    const std::string wanted_rv = next.contains("metadata") && next["metadata"].is_object()
                                      ? next["metadata"].value("resourceVersion", "")
                                      : "";
    if (!wanted_rv.empty() && wanted_rv != current["metadata"].value("resourceVersion", "")) {
      error = ModifiedConflict(resource, path.name);
      return;
    }
    if (status_only) {
      if (next.contains("status")) {
        current["status"] = next["status"];
      } else {
        current.erase("status");
      }
      return;
    }
    if (keep_status) {
      if (current.contains("status")) {
        next["status"] = current["status"];
      } else {
        next.erase("status");
      }
    }
    // Validated as it would be stored: the name is the stored one.
    Json candidate = next;
    if (!candidate["metadata"].is_object()) candidate["metadata"] = Json::object();
    candidate["metadata"]["name"] = current["metadata"]["name"];
    if (auto invalid = ValidateObject(*path.resource, candidate)) {
      error = std::move(invalid);
      return;
    }
    current = std::move(next);
  });
  if (error) return ErrorResponse(*error);
  return Result(result);
}

ApiResponse Put(Store& store, const ApiRequest& request, const ResourcePath& path) {
  auto body = ParseBody(request, *path.resource);
  if (!body.ok()) return ErrorResponse(body.error);
  Json object = std::move(*body.value);
  if (object.contains("metadata") && object["metadata"].is_object()) {
    const Json& meta = object["metadata"];
    std::string name = meta.value("name", "");
    if (!name.empty() && name != path.name) {
      return ErrorResponse(BadRequest("the name of the object (" + name +
                                      ") does not match the name on the URL (" + path.name + ")"));
    }
    std::string ns = meta.value("namespace", "");
    if (path.resource->namespaced && !ns.empty() && ns != path.ns) {
      return ErrorResponse(BadRequest(
          "the namespace of the provided object does not match the namespace sent on the "
          "request"));
    }
  }
  return Write(store, path, [&](const Json&, std::optional<ApiError>&) { return object; });
}

ApiResponse Patch(Store& store, const ApiRequest& request, const ResourcePath& path) {
  std::string type = request.content_type.substr(0, request.content_type.find(';'));
  const bool merge =
      type == "application/merge-patch+json" || type == "application/strategic-merge-patch+json";
  const bool json_patch = type == "application/json-patch+json";
  if (!merge && !json_patch) return ErrorResponse(UnsupportedPatchTypeError(type));
  Json patch = Json::parse(request.body, nullptr, false);
  if (patch.is_discarded() || (merge && !patch.is_object()) || (json_patch && !patch.is_array())) {
    return ErrorResponse(BadRequest("error decoding patch: invalid JSON"));
  }
  return Write(store, path, [&](const Json& current, std::optional<ApiError>& error) {
    Json next = current;
    if (merge) {
      next.merge_patch(patch);
      return next;
    }
    try {
      return current.patch(patch);
    } catch (const Json::exception& e) {
      error = ApiError{422, "Invalid",
                       std::string("the server rejected our request due to an "
                                   "error in our request: ") +
                           e.what(),
                       Json::object()};
      return current;
    }
  });
}

ApiResponse Log(Store& store, const ParsedTarget& target, const ResourcePath& path) {
  LogOptions options;
  options.container = QueryString(target, "container");
  options.tail_lines = QueryInt(target, "tailLines");
  options.limit_bytes = QueryInt(target, "limitBytes");
  auto pod = PodForLog(store, path.ns, path.name, options);
  if (!pod.ok()) return ErrorResponse(pod.error);
  std::string text =
      TailLines(store.Log((*pod.value)["metadata"].value("uid", "")), options.tail_lines);
  if (options.limit_bytes && *options.limit_bytes >= 0 &&
      text.size() > static_cast<size_t>(*options.limit_bytes)) {
    text.resize(static_cast<size_t>(*options.limit_bytes));
  }
  return ApiResponse{200, "text/plain", std::move(text), {}};
}

}  // namespace

ApiResponse JsonResponse(int status, const Json& body) {
  return ApiResponse{status, "application/json", body.dump(), {}};
}

ApiResponse ErrorResponse(const ApiError& error) {
  return JsonResponse(error.code, error.ToStatus());
}

ApiResponse HandleResourceRequest(Store& store, const ApiRequest& request,
                                  const ParsedTarget& target, const ResourcePath& path) {
  const std::string& m = request.method;
  if (m != "GET" && target.query.count("dryRun")) {
    // Better refused than done for real.
    return ErrorResponse(BadRequest("dryRun is not supported by the fake API server"));
  }
  try {
    if (path.subresource == "log") {
      if (m != "GET") return ErrorResponse(MethodNotAllowedError());
      return Log(store, target, path);
    }
    if (path.subresource == "status") {
      if (m == "GET") return Result(store.Get(path.resource->name, path.ns, path.name));
      if (m == "PUT") return Put(store, request, path);
      if (m == "PATCH") return Patch(store, request, path);
      return ErrorResponse(MethodNotAllowedError());
    }
    if (!path.subresource.empty()) return ErrorResponse(MethodNotAllowedError());
    if (path.name.empty()) {
      if (m == "GET") return List(store, target, path);
      if (m == "POST") return Create(store, request, target, path);
      if (m == "DELETE") return Delete(store, request, target, path);
      return ErrorResponse(MethodNotAllowedError());
    }
    if (m == "GET") return Result(store.Get(path.resource->name, path.ns, path.name));
    if (m == "PUT") return Put(store, request, path);
    if (m == "PATCH") return Patch(store, request, path);
    if (m == "DELETE") return Delete(store, request, target, path);
    return ErrorResponse(MethodNotAllowedError());
  } catch (const Json::exception& e) {
    return ErrorResponse(BadRequest(std::string("malformed request: ") + e.what()));
  }
}

bool IsWatch(const ParsedTarget& target, const ResourcePath& path) {
  return path.subresource.empty() && QueryBool(target, "watch");
}

ApiResult<WatchPlan> PlanWatch(const ParsedTarget& target, const ResourcePath& path,
                               std::chrono::seconds default_timeout) {
  WatchPlan plan;
  plan.ns = path.ns;
  auto labels = ParseLabelSelector(QueryString(target, "labelSelector"));
  if (!labels.ok()) return ApiResult<WatchPlan>::Err(BadRequest(labels.status().message()));
  std::string field_text = QueryString(target, "fieldSelector");
  if (!path.name.empty()) {
    // A watch on one object is a watch on its collection by name.
    field_text = "metadata.name=" + path.name + (field_text.empty() ? "" : "," + field_text);
  }
  auto fields = ParseFieldSelector(*path.resource, field_text);
  if (!fields.ok()) return ApiResult<WatchPlan>::Err(fields.error);
  plan.filter =
      std::make_shared<WatchFilter>(*path.resource, path.ns, *labels, std::move(*fields.value));
  const std::string rv = QueryString(target, "resourceVersion");
  if (!rv.empty() && rv != "0") {
    if (rv.find_first_not_of("0123456789") != std::string::npos || rv.size() > 19) {
      return ApiResult<WatchPlan>::Err(BadRequest("invalid resource version \"" + rv + "\""));
    }
    plan.since = std::stoull(rv);
  }
  plan.timeout = default_timeout;
  if (auto t = QueryInt(target, "timeoutSeconds"); t && *t > 0) {
    plan.timeout = std::chrono::seconds(*t);
  }
  plan.bookmarks = QueryBool(target, "allowWatchBookmarks");
  return ApiResult<WatchPlan>::Ok(std::move(plan));
}

}  // namespace edl::fakekube
