// ClusterSpec parsing.
#include "tests/fakekube/server/cluster_spec.h"

#include <cctype>
#include <set>

#include "tests/fakekube/server/quantity.h"

namespace edl::fakekube {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsResourceName(const std::string& s) {
  if (s.empty() || s.front() == '/' || s.back() == '/') return false;
  int slashes = 0;
  for (char c : s) {
    if (c == '/') {
      ++slashes;
      continue;
    }
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) {
      return false;
    }
  }
  return slashes <= 1;
}

Result<NodeSpec> ParseNode(const std::string& text) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) {
    return InvalidArgument("node \"" + text +
                           "\": expected NAME:RESOURCE=QUANTITY[,...], e.g. "
                           "node-a:cpu=4,memory=8Gi");
  }
  NodeSpec node;
  node.name = Trim(text.substr(0, colon));
  const std::string where = "node \"" + node.name + "\"";
  if (!IsDnsLabel(node.name)) {
    return InvalidArgument(where +
                           ": the name must be a DNS-1123 label (lower-case letters, "
                           "digits and '-', at most 63 characters)");
  }
  std::string resources = Trim(text.substr(colon + 1));
  if (resources.empty()) {
    return InvalidArgument(where + ": no resources given (e.g. cpu=4,memory=8Gi)");
  }
  for (const std::string& raw : Split(resources, ',')) {
    std::string field = Trim(raw);
    size_t eq = field.find('=');
    if (eq == std::string::npos) {
      return InvalidArgument(where + ": field \"" + field + "\": expected RESOURCE=QUANTITY");
    }
    std::string name = Trim(field.substr(0, eq));
    std::string value = Trim(field.substr(eq + 1));
    if (!IsResourceName(name)) {
      return InvalidArgument(where + ": field \"" + name +
                             "\": not a resource name (cpu, memory, nvidia.com/gpu, ...)");
    }
    if (node.capacity.count(name)) {
      return InvalidArgument(where + ": field \"" + name + "\" given twice");
    }
    Result<int64_t> amount = ParseMilliQuantity(value);
    if (!amount.ok()) return amount.status().WithPrefix(where + ": field \"" + name + "\"");
    if (*amount < 0) {
      return InvalidArgument(where + ": field \"" + name + "\": must not be negative, got " +
                             value);
    }
    node.capacity[name] = *amount;
  }
  return node;
}

}  // namespace

Result<std::vector<NodeSpec>> ParseNodeSpecs(const std::string& text) {
  std::vector<std::string> parts = Split(text, ';');
  if (!parts.empty() && Trim(parts.back()).empty()) parts.pop_back();
  if (parts.empty()) {
    return InvalidArgument("--nodes: no nodes given (e.g. node-a:cpu=4,memory=8Gi)");
  }
  std::vector<NodeSpec> nodes;
  std::set<std::string> names;
  for (const std::string& part : parts) {
    Result<NodeSpec> node = ParseNode(Trim(part));
    if (!node.ok()) return node.status().WithPrefix("--nodes");
    if (!names.insert(node->name).second) {
      return InvalidArgument("--nodes: node \"" + node->name + "\" given twice");
    }
    nodes.push_back(std::move(node).value());
  }
  return nodes;
}

std::vector<NodeSpec> DefaultNodeSpecs() {
  return {
      NodeSpec{"node-0", {{"cpu", 8 * 1000}, {"memory", int64_t{32} * 1024 * 1024 * 1024 * 1000}}}};
}

nlohmann::json NodeObject(const NodeSpec& node, const std::string& host_ip) {
  nlohmann::json capacity = nlohmann::json::object();
  for (const auto& [name, milli] : node.capacity) {
    capacity[name] = FormatMilliQuantity(milli, name == "memory" || name == "ephemeral-storage");
  }
  if (!capacity.contains("pods")) capacity["pods"] = "110";
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", node.name},
            {"labels",
             {{"kubernetes.io/hostname", node.name},
              {"kubernetes.io/os", "linux"},
              {"type", "fake-kubelet"}}}}},
          {"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"addresses",
             {{{"type", "InternalIP"}, {"address", host_ip}},
              {{"type", "Hostname"}, {"address", node.name}}}},
            {"conditions",
             {{{"type", "Ready"},
               {"status", "True"},
               {"reason", "KubeletReady"},
               {"message", "kubelet is posting ready status"}}}},
            {"nodeInfo", {{"kubeletVersion", "v1.32.4-fake"}, {"operatingSystem", "linux"}}}}}};
}

}  // namespace edl::fakekube
