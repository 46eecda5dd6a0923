// Permissions from rbac.yaml and from audit events (see rbac_grants.h).
#include "tests/fakekube/rbac_grants.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iterator>

#include "base/file.h"
#include "tests/testing/paths.h"

namespace edl::testing {
namespace {

using Json = nlohmann::json;

// rbac.yaml holds maps, sequences and strings only.
Json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      Json object = Json::object();
      for (const auto& entry : node) object[entry.first.as<std::string>()] = ToJson(entry.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      Json array = Json::array();
      for (const auto& item : node) array.push_back(ToJson(item));
      return array;
    }
    case YAML::NodeType::Scalar: return node.as<std::string>();
    default: return nullptr;
  }
}

// "pods" + "batch" + "status" -> "pods.batch/status".
std::string Qualified(const std::string& resource, const std::string& group,
                      const std::string& subresource) {
  return resource + (group.empty() ? "" : "." + group) +
         (subresource.empty() ? "" : "/" + subresource);
}

}  // namespace

Result<std::vector<Json>> LoadRbacManifest(const std::string& ns) {
  const std::string path = SourceDir() + "/scripts/k8s/rbac.yaml";
  EDL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::vector<Json> objects;
  try {
    for (const YAML::Node& doc : YAML::LoadAll(text)) {
      if (!doc.IsMap()) continue;
      Json object = ToJson(doc);
      object["metadata"]["namespace"] = ns;
      if (object.contains("subjects")) {
        for (Json& subject : object["subjects"]) {
          if (subject.value("kind", "") == "ServiceAccount") subject["namespace"] = ns;
        }
      }
      objects.push_back(std::move(object));
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
  return objects;
}

Permissions RoleGrants(const std::vector<Json>& objects, const std::string& role) {
  Permissions grants;
  bool found = false;
  for (const Json& object : objects) {
    if (object.value("kind", "") != "Role" || object["metadata"].value("name", "") != role) {
      continue;
    }
    found = true;
    for (const Json& rule : object.value("rules", Json::array())) {
      EXPECT_FALSE(rule.contains("resourceNames")) << role << ": " << rule.dump();
      for (const Json& group : rule.value("apiGroups", Json::array())) {
        for (const Json& resource : rule.value("resources", Json::array())) {
          for (const Json& verb : rule.value("verbs", Json::array())) {
            EXPECT_TRUE(group != "*" && resource != "*" && verb != "*") << role << ": " << rule;
            const std::string r = resource.get<std::string>();
            const size_t slash = r.find('/');
            const std::string sub = slash == std::string::npos ? "" : r.substr(slash + 1);
            grants.insert(verb.get<std::string>() + " " +
                          Qualified(r.substr(0, slash), group.get<std::string>(), sub));
          }
        }
      }
    }
  }
  EXPECT_TRUE(found) << "no Role " << role << " in scripts/k8s/rbac.yaml";
  return grants;
}

Permissions UsedPermissions(const std::vector<Json>& events) {
  Permissions used;
  for (const Json& event : events) {
    if (!event.contains("objectRef")) continue;
    const Json& ref = event["objectRef"];
    used.insert(event.value("verb", "") + " " +
                Qualified(ref.value("resource", ""), ref.value("apiGroup", ""),
                          ref.value("subresource", "")));
  }
  return used;
}

Permissions Minus(const Permissions& a, const Permissions& b) {
  Permissions rest;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(rest, rest.end()));
  return rest;
}

Permissions RbacYamlGrants(const std::string& role) {
  auto objects = LoadRbacManifest("default");
  EXPECT_TRUE(objects.ok()) << objects.status().message();
  return objects.ok() ? RoleGrants(*objects, role) : Permissions{};
}

}  // namespace edl::testing
