#include "nn/optim/config_reader.h"

#include <utility>

namespace edl::nn::optim {

ConfigReader::ConfigReader(const nlohmann::json& object, std::string where, std::string path)
    : object_(object), where_(std::move(where)), path_(std::move(path)) {}

std::string ConfigReader::FieldPath(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

Status ConfigReader::Error(const std::string& key, const std::string& message) const {
  return ConfigError(where_, FieldPath(key), message);
}

const nlohmann::json* ConfigReader::Raw(const std::string& key) {
  read_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

void ConfigReader::Ignore(const std::string& key) { read_.insert(key); }

Status ConfigReader::ReadNumber(const std::string& key, double& value) {
  const nlohmann::json* field = Raw(key);
  if (field == nullptr || field->is_null()) return Status::Ok();
  if (!field->is_number()) {
    return Error(key, "expected a number, got " + Describe(*field));
  }
  value = field->get<double>();
  return Status::Ok();
}

Status ConfigReader::ReadInt(const std::string& key, int64_t& value) {
  const nlohmann::json* field = Raw(key);
  if (field == nullptr || field->is_null()) return Status::Ok();
  if (field->is_number_integer()) {
    value = field->get<int64_t>();
    return Status::Ok();
  }
  // Python writes 1000.0 for some integer hyperparameters.
  if (field->is_number_float()) {
    double d = field->get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) {
      value = static_cast<int64_t>(d);
      return Status::Ok();
    }
  }
  return Error(key, "expected an integer, got " + Describe(*field));
}

Status ConfigReader::ReadBool(const std::string& key, bool& value) {
  const nlohmann::json* field = Raw(key);
  if (field == nullptr || field->is_null()) return Status::Ok();
  if (!field->is_boolean()) {
    return Error(key, "expected true or false, got " + Describe(*field));
  }
  value = field->get<bool>();
  return Status::Ok();
}

Status ConfigReader::ReadString(const std::string& key, std::string& value) {
  const nlohmann::json* field = Raw(key);
  if (field == nullptr || field->is_null()) return Status::Ok();
  if (!field->is_string()) {
    return Error(key, "expected a string, got " + Describe(*field));
  }
  value = field->get<std::string>();
  return Status::Ok();
}

Status ConfigReader::ReadNumberList(const std::string& key, std::vector<double>& value) {
  const nlohmann::json* field = Raw(key);
  if (field == nullptr || field->is_null()) return Status::Ok();
  if (!field->is_array()) {
    return Error(key, "expected a list of numbers, got " + Describe(*field));
  }
  std::vector<double> out;
  for (size_t i = 0; i < field->size(); ++i) {
    const nlohmann::json& item = (*field)[i];
    if (!item.is_number()) {
      return Error(key + "[" + std::to_string(i) + "]", "expected a number, got " + Describe(item));
    }
    out.push_back(item.get<double>());
  }
  value = std::move(out);
  return Status::Ok();
}

Status ConfigReader::CheckAllRead() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (read_.count(it.key()) == 0) {
      return Error(it.key(), "unknown field");
    }
  }
  return Status::Ok();
}

Result<SerializedObject> ReadSerializedObject(ConfigReader& top) {
  SerializedObject object;
  EDL_RETURN_IF_ERROR(top.ReadString("class_name", object.class_name));
  top.Ignore("module");
  top.Ignore("registered_name");
  object.config = top.Raw("config");
  EDL_RETURN_IF_ERROR(top.CheckAllRead());
  if (object.class_name.empty()) return top.Error("class_name", "missing");
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (object.config == nullptr || object.config->is_null()) object.config = &kEmpty;
  if (!object.config->is_object()) {
    return top.Error("config", "expected an object, got " + Describe(*object.config));
  }
  return object;
}

std::string Describe(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

Status ConfigError(const std::string& where, const std::string& path, const std::string& message) {
  std::string text = where.empty() ? "" : where + ": ";
  if (!path.empty()) text += path + ": ";
  return InvalidArgument(text + message);
}

}  // namespace edl::nn::optim
