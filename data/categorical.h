// CategoricalEncoder: maps the string values of one categorical column to
// integer ids, by a stable hash (FNV-1a 64 of the exact bytes, modulo the
// bucket count, identical on every platform and run) or by a vocabulary
// (vocabulary[i] -> i + 1; 0 is reserved for out-of-vocabulary values).
// Values are compared exactly: no trimming or case folding. Immutable after
// construction, so thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "data/input_spec.h"

namespace edl::data {

// FNV-1a, 64-bit (http://www.isthe.com/chongo/tech/comp/fnv/).
uint64_t Fnv1a64(std::string_view bytes);

class CategoricalEncoder {
 public:
  explicit CategoricalEncoder(const CategoricalColumn& column);

  // An id in [0, num_ids()).
  int64_t Id(std::string_view value) const;
  int64_t num_ids() const { return num_ids_; }

 private:
  int64_t hash_buckets_;
  int64_t num_ids_;
  std::unordered_map<std::string, int64_t> vocabulary_;
};

}  // namespace edl::data
