// ConfigReader: typed access to the fields of one Keras-style JSON config
// object ({"beta_1": 0.9, ...}) that remembers which fields were read, so
// that a misspelt or unsupported field is reported instead of ignored.
//
// Internal to nn/optim (it exposes nlohmann::json); only .cc files include it.
// Errors read "<where>: <path>.<field>: expected a number, got \"x\"".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::nn::optim {

class ConfigReader {
 public:
  // REQUIRES: object outlives the reader. `path` names the object
  // ("optimizer.config"); `where` names the file ("model.json").
  ConfigReader(const nlohmann::json& object, std::string where, std::string path);

  // Each Read* leaves `value` unchanged when the field is absent (or null,
  // for the optional ones) and fails when it has the wrong type.
  Status ReadNumber(const std::string& key, double& value);
  Status ReadInt(const std::string& key, int64_t& value);
  Status ReadBool(const std::string& key, bool& value);
  Status ReadString(const std::string& key, std::string& value);
  Status ReadNumberList(const std::string& key, std::vector<double>& value);
  // Marks a field as known without reading it.
  void Ignore(const std::string& key);
  // The raw field (nullptr if absent), marked as read.
  const nlohmann::json* Raw(const std::string& key);

  // Fails naming the first field that no Read*/Ignore/Raw asked for.
  Status CheckAllRead() const;

  // "<where>: <path>.<key>: <message>" as an InvalidArgument status.
  Status Error(const std::string& key, const std::string& message) const;
  const std::string& where() const { return where_; }
  std::string FieldPath(const std::string& key) const;

 private:
  const nlohmann::json& object_;
  std::string where_;
  std::string path_;
  std::set<std::string> read_;
};

// The two fields of a Keras serialized object {"class_name": ..., "config":
// {...}} (an optimizer, a learning rate schedule).
struct SerializedObject {
  std::string class_name;
  // Points into the JSON the reader reads, or at a static empty object when
  // the config is absent or null.
  const nlohmann::json* config = nullptr;
};

// Reads `top` as a serialized object, ignoring Keras 3's "module" and
// "registered_name". Fails naming the field when a field is unknown,
// class_name is missing or not a string, or config is not an object.
Result<SerializedObject> ReadSerializedObject(ConfigReader& top);

// A short rendering of a JSON value for error messages ("\"x\"", "[1,2]").
std::string Describe(const nlohmann::json& value);

// "<where>: <path>: <message>".
Status ConfigError(const std::string& where, const std::string& path, const std::string& message);

}  // namespace edl::nn::optim
