// Private to tensor/cpu/*.cc (the only files that may include oneDNN): the
// shared engine, a stream per thread, memory helpers, the primitive cache
// and the translation of dnnl::error into an EDL_CHECK failure.
//
// Thread-safety: Engine() and the cache are safe from any thread; each thread
// gets its own stream.
#pragma once

#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "tensor/tensor.h"

namespace edl::tensor::cpu {

using Dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::engine& Engine();
dnnl::stream& ThreadStream();

// A dense row-major f32 descriptor of `dims` (rank 1..12).
dnnl::memory::desc PlainMd(const Dims& dims);
Dims ToDims(const Shape& shape);
// User memory over a tensor's bytes (no copy).
dnnl::memory UserMemory(const dnnl::memory::desc& md, const Tensor& t);

// One tensor argument of a primitive: the user's layout, the primitive's,
// and the reorder between them (user -> primitive for inputs, back for
// outputs) when they differ.
struct Operand {
  dnnl::memory::desc user, prim;
  bool reorder = false;
  dnnl::reorder convert;

  void Init(const dnnl::memory::desc& user_md, const dnnl::memory::desc& prim_md, bool input);
  // Memory in the primitive's layout over t, or over `scratch`.
  dnnl::memory Bind(const Tensor& t, Tensor& scratch) const;
  // Before the primitive runs: fills an input's scratch from t.
  void In(const Tensor& t, const dnnl::memory& bound) const;
  // After the primitive runs: copies an output's scratch into t.
  void Out(const dnnl::memory& bound, Tensor& t) const;
};

// Cached primitives, keyed by a string naming the op and its shapes and
// parameters. make() runs once per key and returns the entry to keep.
class PrimitiveCache {
 public:
  static std::shared_ptr<void> GetOrCreate(const std::string& key,
                                           const std::function<std::shared_ptr<void>()>& make);
};

template <typename Entry, typename Make>
std::shared_ptr<Entry> Cached(const std::string& key, Make make) {
  return std::static_pointer_cast<Entry>(
      PrimitiveCache::GetOrCreate(key, [&]() -> std::shared_ptr<void> { return make(); }));
}

// Builds cache keys: Key("conv") << dims << 3 ...
class Key {
 public:
  explicit Key(const char* op) : key_(op) {}
  Key& operator<<(int64_t v) {
    key_ += ',';
    key_ += std::to_string(v);
    return *this;
  }
  Key& operator<<(const Shape& s) {
    key_ += '[';
    for (int64_t d : s) *this << d;
    key_ += ']';
    return *this;
  }
  Key& operator<<(float v);
  const std::string& str() const { return key_; }

 private:
  std::string key_;
};

// Runs f, turning a dnnl::error into an EDL_CHECK failure naming the op.
void RunDnnl(const char* op, const std::function<void()>& f);

}  // namespace edl::tensor::cpu
