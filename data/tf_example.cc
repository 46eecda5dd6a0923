#include "data/tf_example.h"

#include <cstdint>

#include "tf_example.pb.h"

namespace edl::data {

size_t ExampleFeature::size() const {
  switch (kind) {
    case Kind::kBytes:
      return bytes.size();
    case Kind::kFloat:
      return floats.size();
    case Kind::kInt64:
      return ints.size();
    case Kind::kEmpty:
      return 0;
  }
  return 0;
}

const char* ExampleKindName(ExampleFeature::Kind kind) {
  switch (kind) {
    case ExampleFeature::Kind::kBytes:
      return "bytes_list";
    case ExampleFeature::Kind::kFloat:
      return "float_list";
    case ExampleFeature::Kind::kInt64:
      return "int64_list";
    case ExampleFeature::Kind::kEmpty:
      return "empty";
  }
  return "?";
}

Result<std::map<std::string, ExampleFeature>> ParseExample(std::string_view payload,
                                                           const std::string& where) {
  if (payload.size() > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgument(where + ": a " + std::to_string(payload.size()) +
                           "-byte record is larger than a tf.train.Example can be (2 GiB)");
  }
  edl::tf::Example example;
  if (!example.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return InvalidArgument(where + ": not a serialized tf.train.Example (" +
                           std::to_string(payload.size()) + " bytes that do not parse)");
  }
  std::map<std::string, ExampleFeature> out;
  for (const auto& [name, f] : example.features().feature()) {
    ExampleFeature e;
    switch (f.kind_case()) {
      case edl::tf::Feature::kBytesList:
        e.kind = ExampleFeature::Kind::kBytes;
        e.bytes.assign(f.bytes_list().value().begin(), f.bytes_list().value().end());
        break;
      case edl::tf::Feature::kFloatList:
        e.kind = ExampleFeature::Kind::kFloat;
        e.floats.assign(f.float_list().value().begin(), f.float_list().value().end());
        break;
      case edl::tf::Feature::kInt64List:
        e.kind = ExampleFeature::Kind::kInt64;
        e.ints.assign(f.int64_list().value().begin(), f.int64_list().value().end());
        break;
      case edl::tf::Feature::KIND_NOT_SET:
        break;
    }
    out.emplace(name, std::move(e));
  }
  return out;
}

std::string SerializeExample(const std::map<std::string, ExampleFeature>& features) {
  edl::tf::Example example;
  auto* map = example.mutable_features()->mutable_feature();
  for (const auto& [name, e] : features) {
    edl::tf::Feature& f = (*map)[name];
    switch (e.kind) {
      case ExampleFeature::Kind::kBytes:
        for (const std::string& b : e.bytes) f.mutable_bytes_list()->add_value(b);
        break;
      case ExampleFeature::Kind::kFloat:
        for (float v : e.floats) f.mutable_float_list()->add_value(v);
        break;
      case ExampleFeature::Kind::kInt64:
        for (int64_t v : e.ints) f.mutable_int64_list()->add_value(v);
        break;
      case ExampleFeature::Kind::kEmpty:
        break;
    }
  }
  return example.SerializeAsString();
}

}  // namespace edl::data
