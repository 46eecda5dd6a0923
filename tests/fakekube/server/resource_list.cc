// ResourceList parsing and arithmetic.
#include "tests/fakekube/server/resource_list.h"

#include <algorithm>

#include "tests/fakekube/server/quantity.h"

namespace edl::fakekube {
namespace {

using Json = nlohmann::json;

Result<int64_t> QuantityOf(const Json& value) {
  if (value.is_string()) return ParseMilliQuantity(value.get<std::string>());
  if (value.is_number_integer()) return ParseMilliQuantity(std::to_string(value.get<int64_t>()));
  if (value.is_number()) return ParseMilliQuantity(value.dump());
  return InvalidArgument("quantity must be a string or a number, got " + value.dump());
}

// requests, falling back to limits, of one container.
Result<ResourceList> ContainerRequests(const Json& container) {
  const Json empty = Json::object();
  const Json& resources = container.contains("resources") ? container["resources"] : empty;
  const Json& limits = resources.contains("limits") ? resources["limits"] : empty;
  const Json& requests = resources.contains("requests") ? resources["requests"] : empty;
  EDL_ASSIGN_OR_RETURN(ResourceList out, ParseResourceList(limits));
  EDL_ASSIGN_OR_RETURN(ResourceList request_list, ParseResourceList(requests));
  for (const auto& [name, amount] : request_list) out[name] = amount;
  return out;
}

}  // namespace

Result<ResourceList> ParseResourceList(const Json& object) {
  ResourceList out;
  if (object.is_null()) return out;
  if (!object.is_object()) {
    return InvalidArgument("resources must be an object, got " + object.dump());
  }
  for (const auto& [name, value] : object.items()) {
    Result<int64_t> amount = QuantityOf(value);
    if (!amount.ok()) return amount.status().WithPrefix("resource \"" + name + "\"");
    if (*amount < 0) {
      return InvalidArgument("resource \"" + name + "\": must be non-negative, got " +
                             value.dump());
    }
    out[name] = *amount;
  }
  return out;
}

Result<ResourceList> PodRequests(const Json& pod) {
  ResourceList total;
  if (!pod.contains("spec") || !pod["spec"].is_object()) return total;
  const Json& spec = pod["spec"];
  auto each = [&](const char* field, bool sum) -> Status {
    if (!spec.contains(field) || !spec[field].is_array()) return Status::Ok();
    for (const Json& container : spec[field]) {
      Result<ResourceList> one = ContainerRequests(container);
      if (!one.ok()) {
        return one.status().WithPrefix(std::string(field) + " \"" +
                                       container.value("name", std::string()) + "\"");
      }
      for (const auto& [name, amount] : *one) {
        total[name] = sum ? total[name] + amount : std::max(total[name], amount);
      }
    }
    return Status::Ok();
  };
  EDL_RETURN_IF_ERROR(each("containers", true));
  EDL_RETURN_IF_ERROR(each("initContainers", false));
  return total;
}

int64_t MemoryLimitBytes(const Json& container) {
  if (!container.contains("resources")) return 0;
  const Json& resources = container["resources"];
  if (!resources.contains("limits") || !resources["limits"].contains("memory")) return 0;
  Result<int64_t> milli = QuantityOf(resources["limits"]["memory"]);
  if (!milli.ok() || *milli <= 0) return 0;
  return (*milli + 999) / 1000;
}

void AddTo(ResourceList& total, const ResourceList& more) {
  for (const auto& [name, amount] : more) total[name] += amount;
}

void SubtractFrom(ResourceList& total, const ResourceList& less) {
  for (const auto& [name, amount] : less) total[name] -= amount;
}

std::vector<std::string> Insufficient(const ResourceList& used, const ResourceList& request,
                                      const ResourceList& capacity) {
  std::vector<std::string> out;
  for (const auto& [name, amount] : request) {
    if (amount <= 0) continue;
    auto u = used.find(name);
    auto c = capacity.find(name);
    int64_t in_use = u == used.end() ? 0 : u->second;
    int64_t have = c == capacity.end() ? 0 : c->second;
    if (in_use + amount > have) out.push_back(name);
  }
  return out;
}

}  // namespace edl::fakekube
