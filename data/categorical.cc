#include "data/categorical.h"

#include <algorithm>
#include <charconv>
#include <cmath>

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
    : hash_buckets_(column.hash_buckets),
      identity_(column.num_buckets > 0),
      boundaries_(column.boundaries),
      num_ids_(column.NumIds()) {
  for (size_t i = 0; i < column.vocabulary.size(); ++i) {
    vocabulary_.emplace(column.vocabulary[i], static_cast<int64_t>(i) + 1);
  }
}

int64_t CategoricalEncoder::Id(std::string_view value) const {
  if (hash_buckets_ > 0) {
    return static_cast<int64_t>(Fnv1a64(value) % static_cast<uint64_t>(hash_buckets_));
  }
  if (!boundaries_.empty()) {
    while (!value.empty() &&
           (value.front() == ' ' || value.front() == '\t' || value.front() == '+')) {
      value.remove_prefix(1);
    }
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    double x = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
        !std::isfinite(x)) {
      return -1;
    }
    return std::upper_bound(boundaries_.begin(), boundaries_.end(), x) - boundaries_.begin();
  }
  if (identity_) {
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    int64_t id = -1;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return -1;
    return id >= 0 && id < num_ids_ ? id : -1;
  }
  auto it = vocabulary_.find(std::string(value));
  return it == vocabulary_.end() ? 0 : it->second;
}

IdsPlan PlanIds(const std::vector<CategoricalColumn>& columns, CategoricalLayout layout) {
  IdsPlan plan;
  plan.concat = layout != CategoricalLayout::kSeparate;
  for (const CategoricalColumn& c : columns) {
    if (layout == CategoricalLayout::kConcatWithOffsets) {
      plan.offsets.push_back(plan.num_ids);
      plan.num_ids += c.NumIds();
    } else {
      plan.offsets.push_back(0);
      plan.num_ids = std::max(plan.num_ids, c.NumIds());
    }
  }
  return plan;
}

std::string CategoricalEncoder::RefusalMessage(std::string_view value) const {
  if (bucketized()) return "cannot parse '" + std::string(value) + "' as a number";
  return NotAnIdMessage(value, num_ids_);
}

std::string NotAnIdMessage(std::string_view value, int64_t num_ids) {
  return "'" + std::string(value) + "' is not an id in [0, " + std::to_string(num_ids) + ")";
}

}  // namespace edl::data
