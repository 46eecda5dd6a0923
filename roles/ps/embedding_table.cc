#include "roles/ps/embedding_table.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#ifdef __AVX__
#include <immintrin.h>
#endif

#include "roles/ps/row_sort.h"
#include "tensor/cpu/parallel.h"

namespace edl::roles::ps {

using tensor::Tensor;

namespace {

uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Copies a row to a gather's output with streaming stores when both are
// 32-byte aligned: the output (often larger than the caches, and next read
// by the socket) is not read into the cache first, which saves a third of
// a random gather's memory traffic.
inline void CopyRowOut(float* to, const float* from, int64_t dim) {
#ifdef __AVX__
  if (dim % 8 == 0 && reinterpret_cast<uintptr_t>(to) % 32 == 0) {
    for (int64_t j = 0; j < dim; j += 8) _mm256_stream_ps(to + j, _mm256_loadu_ps(from + j));
    return;
  }
#endif
  std::memcpy(to, from, dim * sizeof(float));
}

// A float32 [m, dim] tensor over this thread's scratch block, valid until
// the thread's next call: a push's scaled gradient rows, written and then
// read by the optimizer, reuse memory the last push left in cache instead
// of a fresh block that every store must first read from memory. Beyond
// what a cache could hold, a fresh tensor (no block kept for good).
Tensor ScratchRows(int64_t m, int64_t dim) {
  constexpr int64_t kMaxScratchFloats = int64_t{1} << 20;  // 4 MiB per thread at most
  if (m * dim > kMaxScratchFloats) return Tensor::Empty({m, dim});
  thread_local std::shared_ptr<float> block;
  thread_local int64_t capacity = 0;
  if (capacity < m * dim) {
    capacity = std::min(std::max(m * dim, 2 * capacity), kMaxScratchFloats);
    block = std::shared_ptr<float>(new float[capacity], std::default_delete<float[]>());
  }
  return Tensor::Adopt(block, block.get(), {m, dim}, tensor::DType::kFloat32);
}

// How many ids ahead a batch of lookups prefetches, and how many gradient
// rows ahead a push's scaling does.
constexpr int64_t kAhead = 16;
constexpr int64_t kGradAhead = 6;

}  // namespace

EmbeddingTable::EmbeddingTable(EmbeddingSpec spec, uint64_t seed,
                               const OptimizerFactory& make_optimizer)
    : spec_(std::move(spec)), initial_row_(spec_, seed) {
  EDL_CHECK_GT(spec_.dim, 0) << spec_.name;
  // Learn the slot names and initial values from a probe variable: an empty
  // sparse update creates the slots and changes nothing.
  std::unique_ptr<nn::optim::Optimizer> probe = make_optimizer();
  Tensor one = Tensor::Zeros({1, 1});
  probe->ApplySparse("probe", one, tensor::SparseRows{});
  slot_names_ = probe->SlotNames();
  const auto slots = probe->Slots();
  for (const std::string& slot : slot_names_) {
    auto it = std::find_if(slots.begin(), slots.end(),
                           [&](const auto& s) { return s.first == "probe/" + slot; });
    EDL_CHECK(it != slots.end()) << "optimizer slot " << slot;
    slot_initial_.push_back(it->second.f32()[0]);
  }
  for (int i = 0; i < kShards; ++i) {
    auto shard = std::make_unique<Shard>();
    shard->optimizer = make_optimizer();
    shards_.push_back(std::move(shard));
  }
}

namespace {

// Calls f(begin, end) over the shards: split across the engine's threads
// when the request moves at least kParallelValues values and no parallel
// region is running already, else inline (a fork and join costs more than
// a small request).
template <typename F>
void ForShards(int64_t values, F f) {
  constexpr int64_t kParallelValues = int64_t{1} << 16;
  if (values < kParallelValues || omp_in_parallel()) {
    f(0, EmbeddingTable::kShards);
    return;
  }
  tensor::cpu::ParallelFor(EmbeddingTable::kShards, 1, f);
}

}  // namespace

int EmbeddingTable::ShardOf(int64_t id) {
  return static_cast<int>(Mix(static_cast<uint64_t>(id)) % kShards);
}

std::vector<std::vector<int64_t>> EmbeddingTable::ByShard(const int64_t* ids, int64_t n) {
  std::vector<std::vector<int64_t>> out(kShards);
  for (int64_t i = 0; i < n; ++i) out[ShardOf(ids[i])].push_back(i);
  return out;
}

std::vector<Tensor> EmbeddingTable::SlotsOf(const Shard& shard) const {
  std::vector<Tensor> out;
  if (slot_names_.empty()) return out;
  const auto slots = shard.optimizer->Slots();
  for (const std::string& slot : slot_names_) {
    const std::string key = spec_.name + "/" + slot;
    auto it =
        std::find_if(slots.begin(), slots.end(), [&](const auto& s) { return s.first == key; });
    if (it == slots.end()) return {};
    out.push_back(it->second);
  }
  return out;
}

void EmbeddingTable::Reserve(Shard& shard, int64_t rows) {
  const int64_t dim = spec_.dim;
  const int64_t cap = shard.values.defined() ? shard.values.dim(0) : 0;
  if (rows <= cap) return;
  const int64_t new_cap = std::max({rows, 2 * cap, int64_t{2}});
  Tensor values = Tensor::Zeros({new_cap, dim});
  if (cap > 0) {
    std::memcpy(values.f32(), shard.values.f32(), cap * dim * sizeof(float));
  }
  std::vector<Tensor> slots = SlotsOf(shard);
  if (!slots.empty()) {
    std::vector<std::pair<std::string, Tensor>> grown;
    for (size_t k = 0; k < slots.size(); ++k) {
      Tensor t = Tensor::Full({new_cap, dim}, slot_initial_[k]);
      std::memcpy(t.f32(), slots[k].f32(), cap * dim * sizeof(float));
      grown.emplace_back(spec_.name + "/" + slot_names_[k], std::move(t));
    }
    Status s = shard.optimizer->RestoreSlots(grown);
    EDL_CHECK(s.ok()) << s.message();
  }
  shard.values = std::move(values);
}

int64_t EmbeddingTable::RowOf(Shard& shard, int64_t id) {
  const int64_t found = shard.row_of.Find(id);
  if (found >= 0) return found;
  const int64_t row = static_cast<int64_t>(shard.ids.size());
  Reserve(shard, row + 1);
  initial_row_(id, shard.values.f32() + row * spec_.dim);
  shard.ids.push_back(id);
  shard.row_of.Insert(id, row);
  return row;
}

void EmbeddingTable::Gather(const int64_t* ids, int64_t n, float* out) {
  const int64_t dim = spec_.dim;
  const auto groups = ByShard(ids, n);
  // Shards are independent (each under its own lock): a large request runs
  // them on the engine's threads.
  ForShards(n * dim, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      if (groups[s].empty()) continue;
      Shard& shard = *shards_[s];
      std::lock_guard<std::mutex> lock(shard.mu);
      const std::vector<int64_t>& group = groups[s];
      const int64_t m = static_cast<int64_t>(group.size());
      for (int64_t k = 0; k < m; ++k) {
        if (k + kAhead < m) shard.row_of.Prefetch(ids[group[k + kAhead]]);
        const int64_t row = RowOf(shard, ids[group[k]]);
        CopyRowOut(out + group[k] * dim, shard.values.f32() + row * dim, dim);
      }
    }
#ifdef __AVX__
    _mm_sfence();  // streaming stores are visible before the join
#endif
  });
}

void EmbeddingTable::Apply(const int64_t* ids, int64_t n, const float* grad, float scale,
                           int64_t iterations) {
  const auto groups = ByShard(ids, n);
  ForShards(n * spec_.dim, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) ApplyToShard(s, groups[s], ids, grad, scale, iterations);
  });
}

void EmbeddingTable::ApplyToShard(int64_t s, const std::vector<int64_t>& positions,
                                  const int64_t* ids, const float* grad, float scale,
                                  int64_t iterations) {
  if (positions.empty()) return;
  const int64_t dim = spec_.dim;
  Shard& shard = *shards_[s];
  const int64_t m = static_cast<int64_t>(positions.size());
  std::lock_guard<std::mutex> lock(shard.mu);
  // (local row, index into positions), in row order: the optimizer gets
  // strictly increasing rows with repeats already summed (in position
  // order, as its Coalesce would), so it skips its own sort by indirection
  // and copy.
  EDL_CHECK_LT(m, int64_t{1} << 31) << "a push of " << m << " rows to one shard";
  std::vector<uint64_t> order(m);
  bool increasing = true;
  for (int64_t k = 0; k < m; ++k) {
    if (k + kAhead < m) shard.row_of.Prefetch(ids[positions[k + kAhead]]);
    order[k] = static_cast<uint64_t>(RowOf(shard, ids[positions[k]])) << 32 | k;
    increasing = increasing && (k == 0 || order[k] >> 32 > order[k - 1] >> 32);
  }
  if (!increasing) SortByRow(order, static_cast<int64_t>(shard.ids.size()));
  auto row_at = [&](int64_t k) { return static_cast<int64_t>(order[k] >> 32); };
  int64_t unique = 0;
  for (int64_t k = 0; k < m; ++k) unique += k == 0 || row_at(k) != row_at(k - 1);
  tensor::SparseRows rows;
  rows.ids = Tensor::Empty({unique}, tensor::DType::kInt64);
  rows.values = ScratchRows(unique, dim);
  int64_t* local = rows.ids.i64();
  float* values = rows.values.f32();
  // Where each position's row goes (its rank among the unique rows; the
  // top bit marks a row's first position), so the gradient is then read in
  // position order, ascending through memory and fetched a few rows ahead,
  // rather than in row order, which jumped about a body too large for any
  // cache (most of a push's time went to waiting for those rows).
  constexpr uint32_t kFirst = uint32_t{1} << 31;
  std::vector<uint32_t> slot(m);
  int64_t u = -1;
  for (int64_t k = 0; k < m; ++k) {
    const bool first = k == 0 || row_at(k) != row_at(k - 1);
    if (first) local[++u] = row_at(k);
    slot[order[k] & 0xffffffffu] = static_cast<uint32_t>(u) | (first ? kFirst : 0);
  }
  for (int64_t k = 0; k < m; ++k) {
    if (k + kGradAhead < m) {
      const char* ahead = reinterpret_cast<const char*>(grad + positions[k + kGradAhead] * dim);
      for (int64_t b = 0; b < dim * 4; b += 64) __builtin_prefetch(ahead + b);
    }
    const float* g = grad + positions[k] * dim;
    float* dst = values + (slot[k] & ~kFirst) * dim;
    if (slot[k] & kFirst) {
      for (int64_t j = 0; j < dim; ++j) dst[j] = scale * g[j];
    } else {
      for (int64_t j = 0; j < dim; ++j) dst[j] += scale * g[j];
    }
  }
  rows.num_rows = shard.values.dim(0);
  shard.optimizer->set_iterations(iterations);
  shard.optimizer->ApplySparse(spec_.name, shard.values, rows);
}

EmbeddingTable::Rows EmbeddingTable::Export() const {
  const int64_t dim = spec_.dim;
  struct Entry {
    int64_t id;
    const float* value;
    std::vector<const float*> slots;
  };
  // Copies of each shard's state, taken under its lock.
  std::vector<Tensor> values(kShards);
  std::vector<std::vector<Tensor>> slots(kShards);
  std::vector<Entry> entries;
  for (int s = 0; s < kShards; ++s) {
    const Shard& shard = *shards_[s];
    std::lock_guard<std::mutex> lock(shard.mu);
    if (shard.ids.empty()) continue;
    values[s] = shard.values.Clone();
    slots[s] = SlotsOf(shard);
    for (size_t row = 0; row < shard.ids.size(); ++row) {
      Entry e{shard.ids[row], values[s].f32() + row * dim, {}};
      for (size_t k = 0; k < slot_names_.size(); ++k) {
        e.slots.push_back(slots[s].empty() ? nullptr : slots[s][k].f32() + row * dim);
      }
      entries.push_back(std::move(e));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.id < b.id; });
  const int64_t n = static_cast<int64_t>(entries.size());
  Rows out;
  out.ids = Tensor::Empty({n}, tensor::DType::kInt64);
  out.values = Tensor::Empty({n, dim});
  for (size_t k = 0; k < slot_names_.size(); ++k) {
    out.slots.push_back(Tensor::Empty({n, dim}));
  }
  for (int64_t i = 0; i < n; ++i) {
    const Entry& e = entries[i];
    out.ids.i64()[i] = e.id;
    std::memcpy(out.values.f32() + i * dim, e.value, dim * sizeof(float));
    for (size_t k = 0; k < slot_names_.size(); ++k) {
      float* dst = out.slots[k].f32() + i * dim;
      if (e.slots[k] == nullptr) {
        std::fill(dst, dst + dim, slot_initial_[k]);
      } else {
        std::memcpy(dst, e.slots[k], dim * sizeof(float));
      }
    }
  }
  return out;
}

void EmbeddingTable::Import(const Rows& rows) {
  const int64_t dim = spec_.dim;
  const int64_t n = rows.ids.numel();
  EDL_CHECK_EQ(rows.values.numel(), n * dim) << spec_.name;
  const bool with_slots = !rows.slots.empty();
  if (with_slots) EDL_CHECK_EQ(rows.slots.size(), slot_names_.size());
  const int64_t* ids = rows.ids.i64();
  const auto groups = ByShard(ids, n);
  for (int s = 0; s < kShards; ++s) {
    if (groups[s].empty()) continue;
    Shard& shard = *shards_[s];
    std::lock_guard<std::mutex> lock(shard.mu);
    std::vector<int64_t> local;
    for (int64_t i : groups[s]) {
      const int64_t row = RowOf(shard, ids[i]);
      std::memcpy(shard.values.f32() + row * dim, rows.values.f32() + i * dim, dim * sizeof(float));
      local.push_back(row);
    }
    if (!with_slots || slot_names_.empty()) continue;
    const int64_t cap = shard.values.dim(0);
    std::vector<Tensor> slots = SlotsOf(shard);
    std::vector<std::pair<std::string, Tensor>> updated;
    for (size_t k = 0; k < slot_names_.size(); ++k) {
      Tensor t = slots.empty() ? Tensor::Full({cap, dim}, slot_initial_[k]) : slots[k];
      for (size_t j = 0; j < local.size(); ++j) {
        std::memcpy(t.f32() + local[j] * dim, rows.slots[k].f32() + groups[s][j] * dim,
                    dim * sizeof(float));
      }
      updated.emplace_back(spec_.name + "/" + slot_names_[k], std::move(t));
    }
    Status st = shard.optimizer->RestoreSlots(updated);
    EDL_CHECK(st.ok()) << st.message();
  }
}

int64_t EmbeddingTable::size() const {
  int64_t n = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    n += static_cast<int64_t>(shard->ids.size());
  }
  return n;
}

}  // namespace edl::roles::ps
