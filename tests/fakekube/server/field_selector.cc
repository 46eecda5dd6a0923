// Field selectors (see field_selector.h).
#include "tests/fakekube/server/field_selector.h"

#include <algorithm>

#include "tests/fakekube/server/api_errors.h"

namespace edl::fakekube {
namespace {

// The labels each resource's GetAttrs/field-label conversion accepts
// (metadata.name and metadata.namespace are accepted everywhere).
std::vector<std::string> SupportedFields(const std::string& resource) {
  if (resource == "pods") {
    return {"spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName"};
  }
  if (resource == "services") return {"spec.clusterIP", "spec.type"};
  if (resource == "secrets") return {"type"};
  if (resource == "nodes") return {"spec.unschedulable"};
  if (resource == "namespaces") return {"status.phase"};
  if (resource == "events") {
    return {"involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type"};
  }
  return {};
}

// The first unescaped occurrence of `op` in `term`, or npos.
size_t FindOperator(const std::string& term, const std::string& op) {
  for (size_t i = 0; i + op.size() <= term.size(); ++i) {
    if (term[i] == '\\') {
      ++i;
      continue;
    }
    if (term.compare(i, op.size(), op) == 0) return i;
  }
  return std::string::npos;
}

std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out += s[i];
  }
  return out;
}

}  // namespace

ApiResult<FieldSelector> ParseFieldSelector(const ResourceInfo& resource, const std::string& text) {
  FieldSelector selector;
  if (text.empty()) return ApiResult<FieldSelector>::Ok(selector);
  // Split on unescaped commas, keeping escapes for the operator search.
  std::vector<std::string> terms(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      terms.back() += text.substr(i, 2);
      ++i;
    } else if (text[i] == ',') {
      terms.emplace_back();
    } else {
      terms.back() += text[i];
    }
  }
  const std::vector<std::string> supported = SupportedFields(resource.name);
  for (const std::string& term : terms) {
    FieldRequirement r;
    size_t at;
    size_t op_len;
    if ((at = FindOperator(term, "!=")) != std::string::npos) {
      r.equals = false, op_len = 2;
    } else if ((at = FindOperator(term, "==")) != std::string::npos) {
      op_len = 2;
    } else if ((at = FindOperator(term, "=")) != std::string::npos) {
      op_len = 1;
    } else {
      return ApiResult<FieldSelector>::Err(
          BadRequest("invalid selector: '" + text + "'; can't understand '" + term + "'"));
    }
    r.field = Unescape(term.substr(0, at));
    r.value = Unescape(term.substr(at + op_len));
    bool known = r.field == "metadata.name" || r.field == "metadata.namespace" ||
                 std::find(supported.begin(), supported.end(), r.field) != supported.end();
    if (!known) {
      return ApiResult<FieldSelector>::Err(BadRequest("field label not supported: " + r.field));
    }
    selector.push_back(std::move(r));
  }
  return ApiResult<FieldSelector>::Ok(selector);
}

std::string FieldValue(const Json& object, const std::string& field) {
  if (field == "source") {
    return FieldValue(object, "source.component");
  }
  const Json* node = &object;
  size_t start = 0;
  const std::string path = field == "status.podIPs" ? "status.podIP" : field;
  for (;;) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) return "";
    node = &(*node)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (node->is_string()) return node->get<std::string>();
  if (node->is_boolean()) return node->get<bool>() ? "true" : "false";
  if (node->is_null()) return "";
  return node->dump();
}

bool MatchesFields(const FieldSelector& selector, const Json& object) {
  for (const FieldRequirement& r : selector) {
    std::string value = FieldValue(object, r.field);
    if (r.field == "spec.unschedulable" && value.empty()) value = "false";
    if ((value == r.value) != r.equals) return false;
  }
  return true;
}

}  // namespace edl::fakekube
