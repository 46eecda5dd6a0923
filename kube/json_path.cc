#include "kube/json_path.h"

namespace edl::kube {

const nlohmann::json* FindAt(const nlohmann::json& object,
                             std::initializer_list<const char*> path) {
  const nlohmann::json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::string StringAt(const nlohmann::json& object, std::initializer_list<const char*> path) {
  const nlohmann::json* v = FindAt(object, path);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace edl::kube
