#include "nn/layers/config_reader.h"

namespace edl::nn::layers {

std::string Describe(const nlohmann::json& value) {
  std::string s = value.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

const nlohmann::json* ConfigReader::Get(const char* field) const {
  if (!config_.is_object()) return nullptr;
  auto it = config_.find(field);
  if (it == config_.end() || it->is_null()) return nullptr;
  return &*it;
}

void ConfigReader::Fail(const char* field, const std::string& message) {
  if (status_.ok()) status_ = InvalidArgument(std::string(field) + " " + message);
}

void ConfigReader::Fail(const Status& status) {
  if (status_.ok()) status_ = status;
}

int64_t ConfigReader::Int(const char* field, int64_t def) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return def;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_float() && v->get<double>() == static_cast<int64_t>(v->get<double>())) {
    return static_cast<int64_t>(v->get<double>());
  }
  Fail(field, "must be an integer, got " + Describe(*v));
  return def;
}

int64_t ConfigReader::RequiredInt(const char* field) {
  if (Get(field) == nullptr) {
    Fail(field, "is required");
    return 0;
  }
  return Int(field, 0);
}

float ConfigReader::Float(const char* field, float def) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return def;
  if (v->is_number()) return v->get<float>();
  Fail(field, "must be a number, got " + Describe(*v));
  return def;
}

std::optional<float> ConfigReader::OptionalFloat(const char* field) {
  if (Get(field) == nullptr) return std::nullopt;
  return Float(field, 0.f);
}

bool ConfigReader::Bool(const char* field, bool def) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return def;
  if (v->is_boolean()) return v->get<bool>();
  Fail(field, "must be true or false, got " + Describe(*v));
  return def;
}

std::string ConfigReader::String(const char* field, const std::string& def) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return def;
  if (v->is_string()) return v->get<std::string>();
  Fail(field, "must be a string, got " + Describe(*v));
  return def;
}

std::array<int64_t, 2> ConfigReader::IntPair(const char* field, std::array<int64_t, 2> def) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return def;
  if (v->is_number_integer()) return {v->get<int64_t>(), v->get<int64_t>()};
  if (v->is_array() && (v->size() == 1 || v->size() == 2) && (*v)[0].is_number_integer() &&
      v->back().is_number_integer()) {
    return {(*v)[0].get<int64_t>(), v->back().get<int64_t>()};
  }
  Fail(field, "must be 1 or 2 integers, got " + Describe(*v));
  return def;
}

std::array<int64_t, 3> ConfigReader::IntTriple(const char* field, std::array<int64_t, 3> def) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return def;
  if (v->is_number_integer()) {
    const int64_t n = v->get<int64_t>();
    return {n, n, n};
  }
  if (v->is_array() && (v->size() == 1 || v->size() == 3)) {
    bool ints = true;
    for (const auto& e : *v) ints = ints && e.is_number_integer();
    if (ints) {
      if (v->size() == 1) {
        const int64_t n = (*v)[0].get<int64_t>();
        return {n, n, n};
      }
      return {(*v)[0].get<int64_t>(), (*v)[1].get<int64_t>(), (*v)[2].get<int64_t>()};
    }
  }
  Fail(field, "must be 1 or 3 integers, got " + Describe(*v));
  return def;
}

std::vector<int64_t> ConfigReader::IntList(const char* field, bool allow_null_entries) {
  const nlohmann::json* v = Get(field);
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  if (!v->is_array()) {
    Fail(field, "must be a list of integers, got " + Describe(*v));
    return out;
  }
  for (const auto& e : *v) {
    if (e.is_number_integer()) {
      out.push_back(e.get<int64_t>());
    } else if (e.is_null() && allow_null_entries) {
      out.push_back(-1);
    } else {
      Fail(field, "must be a list of integers, got " + Describe(*v));
      return {};
    }
  }
  return out;
}

int64_t ConfigReader::Axis(const char* field, int64_t def) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return def;
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_array() && v->size() == 1 && (*v)[0].is_number_integer()) {
    return (*v)[0].get<int64_t>();
  }
  Fail(field, "must be one integer axis, got " + Describe(*v));
  return def;
}

void ConfigReader::ExpectOneOf(const char* field, const std::vector<std::string>& allowed) {
  const nlohmann::json* v = Get(field);
  if (v == nullptr) return;
  if (v->is_string()) {
    for (const auto& a : allowed) {
      if (v->get<std::string>() == a) return;
    }
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
  Fail(field, "must be one of " + list + ", got " + Describe(*v));
}

void ConfigReader::ExpectNull(const char* field) {
  const nlohmann::json* v = Get(field);
  if (v != nullptr) Fail(field, "is not supported, got " + Describe(*v));
}

}  // namespace edl::nn::layers
