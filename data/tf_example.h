// tf.train.Example: the records of TensorFlow/Keras users' TFRecord files,
// parsed with the protobuf library (schema: data/proto/tf_example.proto,
// wire-compatible with TensorFlow's). This header keeps protobuf out of its
// includers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace edl::data {

struct ExampleFeature {
  enum class Kind { kBytes, kFloat, kInt64, kEmpty };
  Kind kind = Kind::kEmpty;  // kEmpty: a Feature with no list set
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  size_t size() const;
};

const char* ExampleKindName(ExampleFeature::Kind kind);  // "bytes_list", ...

// Features by name, ordered. InvalidArgument naming `where` (file and
// record) when the payload is not a serialized Example.
Result<std::map<std::string, ExampleFeature>> ParseExample(std::string_view payload,
                                                           const std::string& where);

// The serialized Example of `features` (tests and tools).
std::string SerializeExample(const std::map<std::string, ExampleFeature>& features);

}  // namespace edl::data
