// Request target parsing (see request.h).
#include "tests/fakekube/server/request.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace edl::fakekube {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(const std::string& s, bool plus_is_space) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> SplitPath(const std::string& raw_path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= raw_path.size()) {
    size_t slash = raw_path.find('/', start);
    std::string part =
        raw_path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

}  // namespace

ParsedTarget ParseTarget(const std::string& target) {
  ParsedTarget parsed;
  size_t q = target.find('?');
  parsed.raw_path = target.substr(0, q);
  parsed.path = PercentDecode(parsed.raw_path, false);
  if (q == std::string::npos) return parsed;
  parsed.raw_query = target.substr(q + 1);
  size_t start = 0;
  while (start <= parsed.raw_query.size()) {
    size_t amp = parsed.raw_query.find('&', start);
    std::string pair =
        parsed.raw_query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      std::string key = PercentDecode(pair.substr(0, eq), true);
      std::string value = eq == std::string::npos ? "" : PercentDecode(pair.substr(eq + 1), true);
      parsed.query.emplace(key, value);  // the first value wins
    }
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  return parsed;
}

bool QueryBool(const ParsedTarget& target, const std::string& name) {
  auto it = target.query.find(name);
  if (it == target.query.end()) return false;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v != "0" && v != "false";
}

std::optional<int64_t> QueryInt(const ParsedTarget& target, const std::string& name) {
  auto it = target.query.find(name);
  if (it == target.query.end() || it->second.empty()) return std::nullopt;
  const std::string& v = it->second;
  size_t digits = v[0] == '-' ? 1 : 0;
  if (digits == v.size() || v.find_first_not_of("0123456789", digits) != std::string::npos ||
      v.size() > 18) {
    return std::nullopt;
  }
  return std::stoll(v);
}

std::string QueryString(const ParsedTarget& target, const std::string& name) {
  auto it = target.query.find(name);
  return it == target.query.end() ? "" : it->second;
}

std::optional<ResourcePath> ParseResourcePath(const ParsedTarget& target) {
  std::vector<std::string> raw = SplitPath(target.raw_path);
  std::vector<std::string> parts;
  for (const std::string& p : raw) parts.push_back(PercentDecode(p, false));
  std::string group;
  size_t i;
  if (parts.size() >= 2 && parts[0] == "api" && parts[1] == "v1") {
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis" && parts[2] == "v1") {
    group = parts[1];
    i = 3;
  } else {
    return std::nullopt;
  }
  if (i >= parts.size()) return std::nullopt;
  ResourcePath path;
  // namespaces/{ns}/{resource}/... is a namespaced resource; namespaces and
  // namespaces/{name}[/status] are the Namespace objects themselves.
  if (parts[i] == "namespaces" && parts.size() >= i + 3) {
    path.ns = parts[i + 1];
    i += 2;
    path.resource = FindResource(group, parts[i]);
    if (!path.resource || !path.resource->namespaced) return std::nullopt;
  } else {
    path.resource = FindResource(group, parts[i]);
    if (!path.resource) return std::nullopt;
  }
  ++i;
  if (i < parts.size()) {
    if (!path.resource->namespaced || !path.ns.empty()) {
      path.name = parts[i++];
    } else {
      return std::nullopt;  // /api/v1/pods/x: a namespaced object needs its namespace
    }
  }
  if (i < parts.size()) {
    path.subresource = parts[i++];
    const auto& subs = path.resource->subresources;
    if (std::find(subs.begin(), subs.end(), path.subresource) == subs.end()) {
      return std::nullopt;
    }
    if (path.subresource == "proxy") {
      // The rest of the raw path, slashes and all.
      std::string rest;
      for (size_t k = i; k < raw.size(); ++k) rest += "/" + raw[k];
      if (rest.empty() || target.raw_path.back() == '/') rest += "/";
      path.proxy_path = rest;
      i = parts.size();
    }
  }
  if (i < parts.size()) return std::nullopt;
  return path;
}

}  // namespace edl::fakekube
