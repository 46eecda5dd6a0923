#include "data/categorical.h"

namespace edl::data {

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

CategoricalEncoder::CategoricalEncoder(const CategoricalColumn& column)
    : hash_buckets_(column.hash_buckets), num_ids_(column.NumIds()) {
  for (size_t i = 0; i < column.vocabulary.size(); ++i) {
    vocabulary_.emplace(column.vocabulary[i], static_cast<int64_t>(i) + 1);
  }
}

int64_t CategoricalEncoder::Id(std::string_view value) const {
  if (hash_buckets_ > 0) {
    return static_cast<int64_t>(Fnv1a64(value) % static_cast<uint64_t>(hash_buckets_));
  }
  auto it = vocabulary_.find(std::string(value));
  return it == vocabulary_.end() ? 0 : it->second;
}

}  // namespace edl::data
