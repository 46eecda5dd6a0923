#include "nn/keras_object.h"

#include <cctype>

namespace edl::nn::internal {

using nlohmann::json;

std::string CanonicalName(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

Result<KerasObject> KerasObject::Parse(const std::string& json_text, const std::string& where) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgument(where + ": not valid JSON: " + json_text.substr(0, 80));
  }
  return FromJson(j, where);
}

Result<KerasObject> KerasObject::FromJson(const json& j, const std::string& where) {
  KerasObject o;
  o.where_ = where;
  if (j.is_string()) {
    o.class_name_ = j.get<std::string>();
  } else if (j.is_object()) {
    auto name = j.find("class_name");
    if (name == j.end() || !name->is_string()) {
      return InvalidArgument(where + ": class_name: expected a string naming the class");
    }
    o.class_name_ = name->get<std::string>();
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      if (key == "class_name" || key == "module" || key == "registered_name" || key == "config" ||
          key == "shared_object_id") {
        continue;
      }
      return InvalidArgument(where + ": unknown field \"" + key + "\"");
    }
    auto config = j.find("config");
    if (config != j.end() && !config->is_null()) {
      if (!config->is_object()) {
        return InvalidArgument(where + ": config: expected an object");
      }
      o.config_ = *config;
    }
  } else {
    return InvalidArgument(where +
                           ": expected a name or {\"class_name\": ..., "
                           "\"config\": {...}}, got " +
                           j.dump());
  }
  if (o.class_name_.empty()) return InvalidArgument(where + ": empty class name");
  o.canonical_ = CanonicalName(o.class_name_);
  return o;
}

const json* KerasObject::Find(const std::string& key) {
  used_.insert(key);
  auto it = config_.find(key);
  if (it == config_.end() || it->is_null()) return nullptr;
  return &*it;
}

Status KerasObject::FieldError(const std::string& key, const std::string& message) const {
  return InvalidArgument(where_ + ": config." + key + ": " + message);
}

Status KerasObject::Get(const std::string& key, double* out) {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number()) return FieldError(key, "expected a number, got " + v->dump());
  *out = v->get<double>();
  return Status::Ok();
}

Status KerasObject::Get(const std::string& key, float* out) {
  double d = *out;
  EDL_RETURN_IF_ERROR(Get(key, &d));
  *out = static_cast<float>(d);
  return Status::Ok();
}

Status KerasObject::Get(const std::string& key, bool* out) {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_boolean()) return FieldError(key, "expected true or false, got " + v->dump());
  *out = v->get<bool>();
  return Status::Ok();
}

Status KerasObject::Get(const std::string& key, std::string* out) {
  const json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return FieldError(key, "expected a string, got " + v->dump());
  *out = v->get<std::string>();
  return Status::Ok();
}

void KerasObject::Ignore(std::initializer_list<const char*> keys) {
  for (const char* k : keys) used_.insert(k);
}

Status KerasObject::CheckAllFieldsUsed() const {
  for (auto it = config_.begin(); it != config_.end(); ++it) {
    if (used_.count(it.key()) == 0) {
      return InvalidArgument(where_ + ": config." + it.key() + ": unknown field for " +
                             class_name_);
    }
  }
  return Status::Ok();
}

}  // namespace edl::nn::internal
