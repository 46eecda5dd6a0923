#include "kube/yaml.h"

#include <yaml-cpp/yaml.h>

namespace edl::kube {
namespace {

void Emit(YAML::Emitter& out, const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = j.begin(); it != j.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& v : j) Emit(out, v);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string: {
      const std::string s = j.get<std::string>();
      // Several lines read best as a literal block; other strings are
      // quoted so YAML never reads them as something else ("1", "true", "").
      if (s.find('\n') != std::string::npos)
        out << YAML::Literal << s;
      else
        out << YAML::DoubleQuoted << s;
      break;
    }
    case nlohmann::json::value_t::boolean: out << j.get<bool>(); break;
    case nlohmann::json::value_t::number_integer: out << j.get<int64_t>(); break;
    case nlohmann::json::value_t::number_unsigned: out << j.get<uint64_t>(); break;
    case nlohmann::json::value_t::number_float: out << j.get<double>(); break;
    default: out << YAML::Null;
  }
}

}  // namespace

std::string ToYaml(const std::vector<nlohmann::json>& objects) {
  std::string text;
  for (const auto& object : objects) {
    YAML::Emitter out;
    Emit(out, object);
    text += "---\n";
    text += out.c_str();
    text += "\n";
  }
  return text;
}

}  // namespace edl::kube
