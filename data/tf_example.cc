#include "data/tf_example.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tf_example.pb.h"

namespace edl::data {

size_t ExampleFeature::size() const {
  switch (kind) {
    case Kind::kBytes: return bytes.size();
    case Kind::kFloat: return floats.size();
    case Kind::kInt64: return ints.size();
    case Kind::kEmpty: return 0;
  }
  return 0;
}

const char* ExampleKindName(ExampleFeature::Kind kind) {
  switch (kind) {
    case ExampleFeature::Kind::kBytes: return "bytes_list";
    case ExampleFeature::Kind::kFloat: return "float_list";
    case ExampleFeature::Kind::kInt64: return "int64_list";
    case ExampleFeature::Kind::kEmpty: return "empty";
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
  if (views != nullptr) return views[i];
  return (*static_cast<const std::vector<std::string>*>(bytes_list))[i];
}

FeatureView ViewOf(const ExampleFeature& feature) {
  FeatureView v;
  v.kind = feature.kind;
  v.size = feature.size();
  v.floats = feature.floats.data();
  v.ints = feature.ints.data();
  v.bytes_list = &feature.bytes;
  return v;
}

// The scanner behind ExampleParser: reads the wire format with protobuf's
// CodedInputStream, keeping features in place (bytes as views into the
// payload, numbers copied into reused buffers), indexed by a hash of their
// names. Field numbers and wire types are tf.train.Example's
// (data/proto/tf_example.proto); unknown fields are skipped, the last of a
// repeated key or oneof wins, as the generated parser does.
struct ExampleParser::Impl {
  struct Entry {
    std::string_view key;
    uint64_t hash = 0;
    ExampleFeature::Kind kind = ExampleFeature::Kind::kEmpty;
    size_t begin = 0;  // into floats, ints or bytes
    size_t size = 0;
  };
  std::vector<Entry> entries;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string_view> bytes;
  std::vector<int32_t> table;  // open addressing: entry index + 1, 0 = empty
  size_t mask = 0;

  using Stream = google::protobuf::io::CodedInputStream;
  bool ParseExample(const uint8_t* data, int size);
  bool ParseFeatures(Stream& in, const uint8_t* data);
  bool ParseEntry(Stream& in, const uint8_t* data);
  bool ParseFeature(Stream& in, const uint8_t* data, Entry* e);
  bool ParseList(Stream& in, const uint8_t* data, int list);
  void Index();
  const Entry* Lookup(std::string_view key, uint64_t hash) const;
};

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// Cheap and good enough for feature names: collisions are compared out.
uint64_t KeyHash(std::string_view s) {
  uint64_t a = 0, b = 0;
  const size_t n = s.size();
  std::memcpy(&a, s.data(), std::min<size_t>(n, 8));
  if (n > 8) std::memcpy(&b, s.data() + n - std::min<size_t>(n - 8, 8), std::min<size_t>(n - 8, 8));
  uint64_t h = (n + 1) * 0x9E3779B97F4A7C15ull ^ a * 0xff51afd7ed558ccdull;
  h ^= (b + (h >> 29)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 32);
}

// Reads a length-delimited nested message with `parse`, within its limit.
template <typename F>
bool Nested(CodedInputStream& in, F parse) {
  uint32_t len = 0;
  if (!in.ReadVarint32(&len) || len > static_cast<uint32_t>(INT32_MAX)) return false;
  const auto limit = in.PushLimit(static_cast<int>(len));
  if (in.BytesUntilLimit() != static_cast<int>(len)) return false;  // past the end
  const bool ok = parse();
  in.PopLimit(limit);
  return ok;
}

// The next length-delimited field's bytes; false when malformed.
bool ReadBytes(CodedInputStream& in, const uint8_t* base, std::string_view* out) {
  uint32_t len = 0;
  if (!in.ReadVarint32(&len)) return false;
  const int at = in.CurrentPosition();
  if (!in.Skip(static_cast<int>(len))) return false;
  *out = std::string_view(reinterpret_cast<const char*>(base) + at, len);
  return true;
}

const uint8_t* Bytes(std::string_view v) { return reinterpret_cast<const uint8_t*>(v.data()); }

}  // namespace

// One CodedInputStream over the payload; nested messages are read within
// PushLimit/PopLimit, as protobuf's own parsers do.
bool ExampleParser::Impl::ParseExample(const uint8_t* data, int size) {
  CodedInputStream in(data, size);
  while (uint32_t tag = in.ReadTag()) {
    if (tag == WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      if (!Nested(in, [&] { return ParseFeatures(in, data); })) return false;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage() && in.CurrentPosition() == size;
}

bool ExampleParser::Impl::ParseFeatures(CodedInputStream& in, const uint8_t* data) {
  while (uint32_t tag = in.ReadTag()) {
    if (tag == WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      if (!Nested(in, [&] { return ParseEntry(in, data); })) return false;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

bool ExampleParser::Impl::ParseEntry(CodedInputStream& in, const uint8_t* data) {
  Entry e;
  while (uint32_t tag = in.ReadTag()) {
    if (tag == WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      if (!ReadBytes(in, data, &e.key)) return false;
    } else if (tag == WireFormatLite::MakeTag(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      // A value given twice merges; its last list wins.
      if (!Nested(in, [&] { return ParseFeature(in, data, &e); })) return false;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  if (!in.ConsumedEntireMessage()) return false;
  e.hash = KeyHash(e.key);
  entries.push_back(e);
  return true;
}

bool ExampleParser::Impl::ParseFeature(CodedInputStream& in, const uint8_t* data, Entry* e) {
  while (uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field < 1 || field > 3 ||
        WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::SkipField(&in, tag)) return false;
      continue;
    }
    // The last of the oneof wins, as a fresh list.
    e->kind = field == 1   ? ExampleFeature::Kind::kBytes
              : field == 2 ? ExampleFeature::Kind::kFloat
                           : ExampleFeature::Kind::kInt64;
    e->begin = field == 1 ? bytes.size() : field == 2 ? floats.size() : ints.size();
    if (!Nested(in, [&] { return ParseList(in, data, field); })) return false;
    e->size = (field == 1 ? bytes.size() : field == 2 ? floats.size() : ints.size()) - e->begin;
  }
  return in.ConsumedEntireMessage();
}

// The values of a BytesList (field 1), FloatList (2) or Int64List (3),
// packed or not.
bool ExampleParser::Impl::ParseList(CodedInputStream& in, const uint8_t* data, int list) {
  while (uint32_t t = in.ReadTag()) {
    const auto wire = WireFormatLite::GetTagWireType(t);
    if (WireFormatLite::GetTagFieldNumber(t) != 1) {
      if (!WireFormatLite::SkipField(&in, t)) return false;
    } else if (list == 1 && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::string_view b;
      if (!ReadBytes(in, data, &b)) return false;
      bytes.push_back(b);
    } else if (list == 2 && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::string_view b;
      if (!ReadBytes(in, data, &b) || b.size() % 4 != 0) return false;
      const size_t at = floats.size();
      floats.resize(at + b.size() / 4);
      std::memcpy(floats.data() + at, b.data(), b.size());  // little-endian, as x86 and ARM
    } else if (list == 2 && wire == WireFormatLite::WIRETYPE_FIXED32) {
      uint32_t bits = 0;
      if (!in.ReadLittleEndian32(&bits)) return false;
      float v;
      std::memcpy(&v, &bits, 4);
      floats.push_back(v);
    } else if (list == 3 && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t len = 0;
      if (!in.ReadVarint32(&len)) return false;
      const auto limit = in.PushLimit(static_cast<int>(len));
      while (in.BytesUntilLimit() > 0) {
        uint64_t v = 0;
        if (!in.ReadVarint64(&v)) return false;
        ints.push_back(static_cast<int64_t>(v));
      }
      in.PopLimit(limit);
    } else if (list == 3 && wire == WireFormatLite::WIRETYPE_VARINT) {
      uint64_t v = 0;
      if (!in.ReadVarint64(&v)) return false;
      ints.push_back(static_cast<int64_t>(v));
    } else if (!WireFormatLite::SkipField(&in, t)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

void ExampleParser::Impl::Index() {
  size_t cap = 16;
  while (cap < 2 * entries.size()) cap *= 2;
  table.assign(cap, 0);
  mask = cap - 1;
  for (size_t i = 0; i < entries.size(); ++i) {
    size_t slot = entries[i].hash & mask;
    while (table[slot] != 0) {
      Entry& other = entries[static_cast<size_t>(table[slot] - 1)];
      if (other.hash == entries[i].hash && other.key == entries[i].key) break;  // a later one wins
      slot = (slot + 1) & mask;
    }
    table[slot] = static_cast<int32_t>(i + 1);
  }
}

const ExampleParser::Impl::Entry* ExampleParser::Impl::Lookup(std::string_view key,
                                                              uint64_t hash) const {
  if (table.empty()) return nullptr;
  for (size_t slot = hash & mask; table[slot] != 0; slot = (slot + 1) & mask) {
    const Entry& e = entries[static_cast<size_t>(table[slot] - 1)];
    if (e.hash == hash && e.key == key) return &e;
  }
  return nullptr;
}

ExampleParser::ExampleParser() : impl_(std::make_unique<Impl>()) {}
ExampleParser::~ExampleParser() = default;

uint64_t ExampleParser::Hash(std::string_view name) { return KeyHash(name); }

Status ExampleParser::Parse(std::string_view payload, const std::string& where) {
  Impl& m = *impl_;
  m.entries.clear();
  m.floats.clear();
  m.ints.clear();
  m.bytes.clear();
  m.table.clear();
  if (payload.size() > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgument(where + ": a " + std::to_string(payload.size()) +
                           "-byte record is larger than a tf.train.Example can be (2 GiB)");
  }
  if (!m.ParseExample(Bytes(payload), static_cast<int>(payload.size()))) {
    m.entries.clear();
    return InvalidArgument(where + ": not a serialized tf.train.Example (" +
                           std::to_string(payload.size()) + " bytes that do not parse)");
  }
  m.Index();
  return Status::Ok();
}

FeatureView ExampleParser::Find(std::string_view name, uint64_t hash) const {
  FeatureView v;
  const Impl::Entry* e = impl_->Lookup(name, hash);
  if (e == nullptr) return v;
  v.kind = e->kind;
  v.size = e->size;
  switch (e->kind) {
    case ExampleFeature::Kind::kFloat: v.floats = impl_->floats.data() + e->begin; break;
    case ExampleFeature::Kind::kInt64: v.ints = impl_->ints.data() + e->begin; break;
    case ExampleFeature::Kind::kBytes: v.views = impl_->bytes.data() + e->begin; break;
    case ExampleFeature::Kind::kEmpty: break;
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
      case edl::tf::Feature::KIND_NOT_SET: break;
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
      case ExampleFeature::Kind::kEmpty: break;
    }
  }
  return example.SerializeAsString();
}

}  // namespace edl::data
