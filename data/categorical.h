// CategoricalEncoder: maps the string values of one categorical column to
// integer ids, by a stable hash (FNV-1a 64 of the exact bytes, modulo the
// bucket count, identical on every platform and run), by a vocabulary
// (vocabulary[i] -> i + 1; 0 is reserved for out-of-vocabulary values) or
// as the value itself (an identity column: a decimal integer id), or by
// the bucket of a number between boundaries (a bucketized column).
// Values are compared exactly: no trimming or case folding. Immutable after
// construction, so thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/input_spec.h"

namespace edl::data {

// FNV-1a, 64-bit (http://www.isthe.com/chongo/tech/comp/fnv/).
uint64_t Fnv1a64(std::string_view bytes);

class CategoricalEncoder {
 public:
  explicit CategoricalEncoder(const CategoricalColumn& column);

  // An id in [0, num_ids()); for an identity column, -1 when the value is
  // not an integer in that range (spaces and tabs around it allowed); for a
  // bucketized column, -1 when it is not a finite number.
  int64_t Id(std::string_view value) const;
  int64_t num_ids() const { return num_ids_; }
  bool identity() const { return identity_; }
  bool bucketized() const { return !boundaries_.empty(); }
  // Why Id(value) is -1: "'x' is not an id in [0, 20)" or "cannot parse
  // 'x' as a number".
  std::string RefusalMessage(std::string_view value) const;

 private:
  int64_t hash_buckets_;
  bool identity_;
  std::vector<double> boundaries_;
  int64_t num_ids_;
  std::unordered_map<std::string, int64_t> vocabulary_;
};

// How a spec's categorical columns become ids inputs (data/input_spec.h's
// layouts): the id offset of each column, and for the concatenated layouts
// the one [N, k] input's id count (the sum of the columns' id counts with
// offsets, their largest without).
struct IdsPlan {
  bool concat = false;
  std::vector<int64_t> offsets;
  int64_t num_ids = 0;
};
IdsPlan PlanIds(const std::vector<CategoricalColumn>& columns, CategoricalLayout layout);

// The message for a value an identity column refuses: "'x' is not an id in
// [0, 20)".
std::string NotAnIdMessage(std::string_view value, int64_t num_ids);

}  // namespace edl::data
