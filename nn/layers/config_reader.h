// ConfigReader: typed, forgiving-where-Keras-is reads of one Keras layer
// config object. Missing or null fields take their Keras default; a field of
// the wrong type records an error naming the field and the value found
// ("kernel_size must be 1 or 2 integers, got \"3x3\""). Only the first error
// is kept; callers read all fields, then check status().
//
// Internal to nn/layers and nn/keras (it includes nlohmann/json.hpp).
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::nn::layers {

class ConfigReader {
 public:
  // REQUIRES: config outlives the reader.
  explicit ConfigReader(const nlohmann::json& config) : config_(config) {}

  // The field, or nullptr when missing or null.
  const nlohmann::json* Get(const char* field) const;

  int64_t Int(const char* field, int64_t def);
  // Records "<field> is required" when missing.
  int64_t RequiredInt(const char* field);
  float Float(const char* field, float def);
  // A float or null (nullopt).
  std::optional<float> OptionalFloat(const char* field);
  bool Bool(const char* field, bool def);
  std::string String(const char* field, const std::string& def);
  // An int n (-> {n, n}) or a list of 1 or 2 ints.
  std::array<int64_t, 2> IntPair(const char* field, std::array<int64_t, 2> def);
  // An int n (-> {n, n, n}) or a list of 1 or 3 ints (3-D layers).
  std::array<int64_t, 3> IntTriple(const char* field, std::array<int64_t, 3> def);
  // A list of ints whose null entries become -1 (for shapes).
  std::vector<int64_t> IntList(const char* field, bool allow_null_entries);
  // An int axis or a list of exactly one int axis (as Keras 2 saves a built
  // BatchNormalization's axis).
  int64_t Axis(const char* field, int64_t def);
  // Records `message` about `field` if no error was recorded yet:
  // "<field> <message>".
  void Fail(const char* field, const std::string& message);
  // Records `status` if no error was recorded yet.
  void Fail(const Status& status);
  // Fails unless the field is missing, null or equal to one of `allowed`.
  void ExpectOneOf(const char* field, const std::vector<std::string>& allowed);
  // Fails unless the field is missing or null (an unsupported feature).
  void ExpectNull(const char* field);

  const Status& status() const { return status_; }

 private:
  const nlohmann::json& config_;
  Status status_;
};

// A short rendering of a JSON value for error messages.
std::string Describe(const nlohmann::json& value);

}  // namespace edl::nn::layers
