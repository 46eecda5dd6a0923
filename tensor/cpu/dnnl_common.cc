#include "tensor/cpu/dnnl_common.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "tensor/cpu/parallel.h"

namespace edl::tensor::cpu {

dnnl::engine& Engine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

Dims ToDims(const Shape& shape) {
  if (shape.empty()) return {1};
  return Dims(shape.begin(), shape.end());
}

dnnl::memory::desc PlainMd(const Dims& dims) {
  Dims strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return dnnl::memory::desc(dims, dt::f32, strides);
}

dnnl::memory UserMemory(const dnnl::memory::desc& md, const Tensor& t) {
  return dnnl::memory(md, Engine(), const_cast<void*>(t.raw_data()));
}

void Operand::Init(const dnnl::memory::desc& user_md, const dnnl::memory::desc& prim_md,
                   bool input) {
  user = user_md;
  prim = prim_md;
  reorder = user != prim;
  if (!reorder) return;
  convert = input ? dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), user, Engine(), prim))
                  : dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), prim, Engine(), user));
}

dnnl::memory Operand::Bind(const Tensor& t, Tensor& scratch) const {
  if (!reorder) return UserMemory(user, t);
  scratch = Tensor::Empty({static_cast<int64_t>(prim.get_size())}, DType::kUInt8);
  return UserMemory(prim, scratch);
}

void Operand::In(const Tensor& t, const dnnl::memory& bound) const {
  if (!reorder) return;
  dnnl::memory src = UserMemory(user, t);
  convert.execute(ThreadStream(), src, const_cast<dnnl::memory&>(bound));
}

void Operand::Out(const dnnl::memory& bound, Tensor& t) const {
  if (!reorder) return;
  dnnl::memory dst = UserMemory(user, t);
  convert.execute(ThreadStream(), const_cast<dnnl::memory&>(bound), dst);
}

Key& Key::operator<<(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return *this << static_cast<int64_t>(bits);
}

std::shared_ptr<void> PrimitiveCache::GetOrCreate(
    const std::string& op_key, const std::function<std::shared_ptr<void>()>& make) {
  // oneDNN fixes a primitive's thread count when it creates it, so a team
  // size change (roles/thread_tuner.h) needs primitives of its own: the
  // count is part of the key, and this thread's OpenMP default is the count.
  SyncThreads();
  const std::string key = op_key + "|threads=" + std::to_string(Threads());
  // Guards `entries`; entries are never evicted (a training run uses a
  // bounded set of shapes and team sizes).
  static std::mutex* mu = new std::mutex;
  static auto* entries = new std::unordered_map<std::string, std::shared_ptr<void>>;
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto it = entries->find(key);
    if (it != entries->end()) return it->second;
  }
  // Built outside the lock; a racing thread's duplicate is dropped.
  std::shared_ptr<void> entry = make();
  std::lock_guard<std::mutex> lock(*mu);
  return entries->emplace(key, std::move(entry)).first->second;
}

void RunDnnl(const char* op, const std::function<void()>& f) {
  // Debian's oneDNN 2.6 (OpenMP runtime) is built without
  // DNNL_ENABLE_CONCURRENT_EXEC: every primitive shares one global scratchpad,
  // so primitives executing at once from different threads corrupt each
  // other's results (Conv2D.RunsConcurrentlyFromSeveralThreads caught it).
  // oneDNN work from several user threads therefore runs one call at a time;
  // each call still uses all of NumThreads() cores. Per-execution user
  // scratchpads (scratchpad_mode::user) would lift this.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  SyncThreads();
  try {
    f();
  } catch (const dnnl::error& e) {
    EDL_CHECK(false) << "oneDNN failed in " << op << ": " << e.what() << " (status "
                     << static_cast<int>(e.status) << ")";
  }
}

}  // namespace edl::tensor::cpu
