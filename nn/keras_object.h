// KerasObject: reads the two forms in which Keras serializes a loss,
// initializer or regularizer — a bare name ("glorot_uniform") or
// {"class_name": "GlorotUniform", "config": {...}} (with Keras 3's "module"
// and "registered_name" keys tolerated) — and the typed fields of its
// config, rejecting unknown ones with an error naming `where` and the field.
//
// Internal to nn/*.cc: it includes nlohmann/json, so public headers must not
// include it.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/status.h"

namespace edl::nn::internal {

// "GlorotUniform", "glorot_uniform" -> "glorotuniform".
std::string CanonicalName(const std::string& name);

class KerasObject {
 public:
  // Parses json_text (a JSON string or object).
  static Result<KerasObject> Parse(const std::string& json_text, const std::string& where);
  static Result<KerasObject> FromJson(const nlohmann::json& j, const std::string& where);

  // The name as written and its CanonicalName().
  const std::string& class_name() const { return class_name_; }
  const std::string& canonical() const { return canonical_; }
  const std::string& where() const { return where_; }

  // Reads an optional config field into *out (untouched when absent or
  // null); an error names the field when it has the wrong type.
  Status Get(const std::string& key, double* out);
  Status Get(const std::string& key, float* out);
  Status Get(const std::string& key, bool* out);
  Status Get(const std::string& key, std::string* out);
  // Marks keys as understood and ignored (e.g. "name", "dtype").
  void Ignore(std::initializer_list<const char*> keys);
  // InvalidArgument naming the first config key nobody read.
  Status CheckAllFieldsUsed() const;

  // "where: config.key: message".
  Status FieldError(const std::string& key, const std::string& message) const;

 private:
  const nlohmann::json* Find(const std::string& key);

  std::string class_name_, canonical_, where_;
  nlohmann::json config_ = nlohmann::json::object();
  std::set<std::string> used_;
};

}  // namespace edl::nn::internal
