// tf.train.Example: the records of TensorFlow/Keras users' TFRecord files,
// parsed with the protobuf library (schema: data/proto/tf_example.proto,
// wire-compatible with TensorFlow's). This header keeps protobuf out of its
// includers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
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

// One feature of an Example viewed in place, without copies: from an
// ExampleParser (valid until it parses the next record) or ViewOf.
struct FeatureView {
  ExampleFeature::Kind kind = ExampleFeature::Kind::kEmpty;
  size_t size = 0;
  const float* floats = nullptr;  // kFloat
  const int64_t* ints = nullptr;  // kInt64
  // kBytes: value i.
  std::string_view bytes(size_t i) const;

  // Where bytes() reads: views into the payload, or a std::vector<std::string>.
  const std::string_view* views = nullptr;
  const void* bytes_list = nullptr;
};
FeatureView ViewOf(const ExampleFeature& feature);

// Parses Examples one after another without copying them: it walks the
// wire format with protobuf's CodedInputStream (the generated parser builds
// a map of strings per record, several times slower), keeps each feature in
// place and indexes the names by hash, in buffers it reuses, so a warm
// parser allocates nothing. It reads valid Examples as ParseExample does
// (tested against it). Not thread-safe: one per reading thread.
class ExampleParser {
 public:
  ExampleParser();
  ~ExampleParser();
  ExampleParser(const ExampleParser&) = delete;
  ExampleParser& operator=(const ExampleParser&) = delete;

  // The payload must outlive the views Find returns. InvalidArgument
  // naming `where` as ParseExample.
  Status Parse(std::string_view payload, const std::string& where);
  // The feature, or one of kind kEmpty when the record lacks it. `hash` is
  // Hash(name), computed once by the caller.
  FeatureView Find(std::string_view name, uint64_t hash) const;
  static uint64_t Hash(std::string_view name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The serialized Example of `features` (tests and tools).
std::string SerializeExample(const std::map<std::string, ExampleFeature>& features);

}  // namespace edl::data
