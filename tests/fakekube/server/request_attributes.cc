// Request attributes, after apiserver's pkg/endpoints/request/requestinfo.go
// (see request_attributes.h).
#include "tests/fakekube/server/request_attributes.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace edl::fakekube {
namespace {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    if (end > begin) parts.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

std::string VerbOf(const std::string& method) {
  if (method == "POST") return "create";
  if (method == "GET" || method == "HEAD") return "get";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "";
}

// NAME of a metadata.name=NAME (or ==) term of a field selector, "" if none.
std::string SelectedName(const std::string& selector) {
  size_t begin = 0;
  while (begin < selector.size()) {
    size_t end = selector.find(',', begin);
    if (end == std::string::npos) end = selector.size();
    const std::string term = selector.substr(begin, end - begin);
    for (const char* op : {"metadata.name==", "metadata.name="}) {
      if (term.rfind(op, 0) == 0) return term.substr(std::string(op).size());
    }
    begin = end + 1;
  }
  return "";
}

}  // namespace

std::string RequestAttributes::QualifiedResource() const {
  return api_group.empty() ? resource : resource + "." + api_group;
}

RequestAttributes ResolveRequest(const std::string& method, const ParsedTarget& target) {
  RequestAttributes a;
  a.path = target.path;
  a.verb = method;
  std::transform(a.verb.begin(), a.verb.end(), a.verb.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  std::vector<std::string> parts = SplitPath(target.path);
  // /api/VERSION/... and /apis/GROUP/VERSION/...; shorter paths (/api,
  // /apis/batch/v1) are discovery, not resources.
  if (parts.size() < 3 || (parts[0] != "api" && parts[0] != "apis")) return a;
  size_t i = 1;
  if (parts[0] == "apis") {
    if (parts.size() < 4) return a;
    a.api_group = parts[i++];
  }
  ++i;  // the version
  a.resource_request = true;
  a.verb = VerbOf(method);
  parts.erase(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(i));
  // /watch/...: the deprecated watch paths.
  if (!parts.empty() && parts[0] == "watch") {
    a.verb = "watch";
    parts.erase(parts.begin());
  }
  if (!parts.empty() && parts[0] == "namespaces") {
    if (parts.size() > 1) {
      a.ns = parts[1];
      // namespaces/NAME/status and /finalize are the Namespace's own.
      if (parts.size() > 2 && parts[2] != "status" && parts[2] != "finalize") {
        parts.erase(parts.begin(), parts.begin() + 2);
      }
    }
  }
  if (parts.size() >= 3) a.subresource = parts[2];
  if (parts.size() >= 2) a.name = parts[1];
  if (!parts.empty()) a.resource = parts[0];
  if (a.name.empty() && a.verb == "get") {
    a.verb = QueryBool(target, "watch") ? "watch" : "list";
    a.name = SelectedName(QueryString(target, "fieldSelector"));
  } else if (a.verb == "watch" && a.name.empty()) {
    a.name = SelectedName(QueryString(target, "fieldSelector"));
  }
  if (a.name.empty() && a.verb == "delete") a.verb = "deletecollection";
  return a;
}

}  // namespace edl::fakekube
