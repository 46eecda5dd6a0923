#include "data/tf_example.h"

#include <cstdint>
#include <vector>

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

namespace {

Status ParseInto(std::string_view payload, const std::string& where, edl::tf::Example* example) {
  if (payload.size() > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgument(where + ": a " + std::to_string(payload.size()) +
                           "-byte record is larger than a tf.train.Example can be (2 GiB)");
  }
  if (!example->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return InvalidArgument(where + ": not a serialized tf.train.Example (" +
                           std::to_string(payload.size()) + " bytes that do not parse)");
  }
  return Status::Ok();
}

}  // namespace

std::string_view FeatureView::bytes(size_t i) const {
  if (bytes_in_vector) return (*static_cast<const std::vector<std::string>*>(bytes_list))[i];
  return static_cast<const google::protobuf::RepeatedPtrField<std::string>*>(bytes_list)->Get(
      static_cast<int>(i));
}

FeatureView ViewOf(const ExampleFeature& feature) {
  FeatureView v;
  v.kind = feature.kind;
  v.size = feature.size();
  v.floats = feature.floats.data();
  v.ints = feature.ints.data();
  v.bytes_list = &feature.bytes;
  v.bytes_in_vector = true;
  return v;
}

struct ExampleParser::Impl {
  // The arena's first block, reused by every record that fits in it.
  std::vector<char> block = std::vector<char>(256 << 10);
  google::protobuf::Arena arena;
  edl::tf::Example* example = nullptr;

  static google::protobuf::ArenaOptions Options(std::vector<char>& block) {
    google::protobuf::ArenaOptions o;
    o.initial_block = block.data();
    o.initial_block_size = block.size();
    return o;
  }
  Impl() : arena(Options(block)) {}
};

ExampleParser::ExampleParser() : impl_(std::make_unique<Impl>()) {}
ExampleParser::~ExampleParser() = default;

Status ExampleParser::Parse(std::string_view payload, const std::string& where) {
  impl_->example = nullptr;
  impl_->arena.Reset();
  impl_->example = google::protobuf::Arena::CreateMessage<edl::tf::Example>(&impl_->arena);
  return ParseInto(payload, where, impl_->example);
}

FeatureView ExampleParser::Find(const std::string& name) const {
  FeatureView v;
  if (impl_->example == nullptr) return v;
  const auto& features = impl_->example->features().feature();
  auto it = features.find(name);
  if (it == features.end()) return v;
  const edl::tf::Feature& f = it->second;
  switch (f.kind_case()) {
    case edl::tf::Feature::kBytesList:
      v.kind = ExampleFeature::Kind::kBytes;
      v.size = static_cast<size_t>(f.bytes_list().value_size());
      v.bytes_list = &f.bytes_list().value();
      break;
    case edl::tf::Feature::kFloatList:
      v.kind = ExampleFeature::Kind::kFloat;
      v.size = static_cast<size_t>(f.float_list().value_size());
      v.floats = f.float_list().value().data();
      break;
    case edl::tf::Feature::kInt64List:
      v.kind = ExampleFeature::Kind::kInt64;
      v.size = static_cast<size_t>(f.int64_list().value_size());
      v.ints = f.int64_list().value().data();
      break;
    case edl::tf::Feature::KIND_NOT_SET:
      break;
  }
  return v;
}

Result<std::map<std::string, ExampleFeature>> ParseExample(std::string_view payload,
                                                           const std::string& where) {
  edl::tf::Example example;
  EDL_RETURN_IF_ERROR(ParseInto(payload, where, &example));
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
