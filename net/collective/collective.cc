// The ring collectives (net/collective/collective.h): allreduce, fused allreduce and
// broadcast as plans of pieces for the pipelined transfer loop
// (net/collective/pipeline.h); ring formation is in
// net/collective/connect.cc.
#include "net/collective/collective.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "net/collective/ring_impl.h"

namespace edl::net {

void Ring::Abort() {
  impl_->aborted.store(true, std::memory_order_release);
  uint64_t one = 1;
  ssize_t ignored = ::write(impl_->wake.get(), &one, sizeof(one));
  (void)ignored;
  impl_->ShutDown();  // also wakes a futex sleep on a shared-memory link
}

namespace {

// Marks a collective as running for its scope; two at once is a bug.
class RunningScope {
 public:
  explicit RunningScope(std::atomic<bool>& running) : running_(running) {
    EDL_CHECK(!running_.exchange(true)) << "two collectives at once on one Ring";
  }
  ~RunningScope() { running_.store(false); }

 private:
  std::atomic<bool>& running_;
};

// Every rank's whole buffer goes round the ring: at step t rank r sends the
// buffer of rank (r - t) mod N (its own at t = 0, then the one received at
// step t-1) and receives that of rank (r - t - 1) mod N into slot t of
// `gathered`; slot N-1 keeps a copy of its own. Then every rank sums the N
// buffers in rank order, so all get the same bits.
Status GatherAllReduce(const PipelineLinks& links, Pieces& pieces, std::vector<float>& gathered,
                       int n, int r, std::span<float> data) {
  const size_t count = data.size();
  const size_t bytes = count * sizeof(float);
  gathered.resize(count * static_cast<size_t>(n));
  float* slots = gathered.data();
  auto& [sends, recvs] = pieces;
  sends.clear();
  recvs.clear();
  for (int t = 0; t < n - 1; ++t) {
    const float* from = t == 0 ? data.data() : slots + (t - 1) * count;
    sends.push_back({reinterpret_cast<const char*>(from), bytes, static_cast<size_t>(t)});
    recvs.push_back({reinterpret_cast<char*>(slots + t * count), bytes, false});
  }
  float* own = slots + (n - 1) * count;
  std::copy_n(data.data(), count, own);
  EDL_RETURN_IF_ERROR(RunPipeline(links, sends, recvs));
  auto buffer = [&](int k) -> const float* {
    return k == r ? own : slots + ((r - k - 1 + n) % n) * count;
  };
  float* __restrict out = data.data();
  std::copy_n(buffer(0), count, out);
  for (int k = 1; k < n; ++k) {
    const float* __restrict add = buffer(k);
    for (size_t i = 0; i < count; ++i) out[i] += add[i];
  }
  return Status::Ok();
}

// Ring allreduce (reduce-scatter then allgather over N chunks, Patarasuk &
// Yuan 2009). At step t (0 <= t < 2(N-1)) rank r sends chunk
//   (r - t) mod N          during reduce-scatter (t < N-1),
//   (r + 1 - (t-N+1)) mod N during allgather,
// and receives the chunk it will send at step t+1. So send piece k of step
// t >= 1 only needs recv piece k of step t-1: the streams are pipelined
// piece by piece across steps.
Status RingAllReduce(const PipelineLinks& links, Pieces& pieces, int n, int r, size_t piece_bytes,
                     std::span<float> data) {
  const size_t count = data.size();
  const size_t base = count / n, rem = count % n;
  auto chunk_begin = [&](int c) { return c * base + std::min<size_t>(c, rem); };
  auto chunk_size = [&](int c) { return base + (static_cast<size_t>(c) < rem); };
  auto mod = [n](int x) { return ((x % n) + n) % n; };
  const size_t piece_floats = piece_bytes / sizeof(float);

  auto& [sends, recvs] = pieces;
  sends.clear();
  recvs.clear();
  size_t first_step_pieces = 0;
  for (int t = 0; t < 2 * (n - 1); ++t) {
    bool reduce = t < n - 1;
    int send_chunk = reduce ? mod(r - t) : mod(r + 1 - (t - n + 1));
    int recv_chunk = reduce ? mod(r - t - 1) : mod(r - (t - n + 1));
    for (size_t off = 0; off < chunk_size(send_chunk); off += piece_floats) {
      size_t len = std::min(piece_floats, chunk_size(send_chunk) - off);
      size_t index = sends.size();
      size_t needs = t == 0 ? 0 : index - first_step_pieces + 1;
      sends.push_back({reinterpret_cast<const char*>(data.data() + chunk_begin(send_chunk) + off),
                       len * sizeof(float), needs});
    }
    if (t == 0) first_step_pieces = sends.size();
    for (size_t off = 0; off < chunk_size(recv_chunk); off += piece_floats) {
      size_t len = std::min(piece_floats, chunk_size(recv_chunk) - off);
      recvs.push_back({reinterpret_cast<char*>(data.data() + chunk_begin(recv_chunk) + off),
                       len * sizeof(float), reduce});
    }
  }
  return RunPipeline(links, sends, recvs);
}

}  // namespace

Status Ring::AllReduce(std::span<float> data, ReduceOp op) {
  RunningScope running(impl_->running);
  const int n = size();
  EDL_RETURN_IF_ERROR(impl_->Usable(spec_));
  if (n == 1 || data.empty()) return Status::Ok();
  Status status =
      data.size_bytes() <= spec_.small_allreduce_bytes
          ? GatherAllReduce(impl_->links, impl_->pieces, impl_->gathered, n, rank(), data)
          : RingAllReduce(impl_->links, impl_->pieces, n, rank(), spec_.piece_bytes, data);
  if (!status.ok()) {
    status = status.WithPrefix(RingPrefix(spec_) + ": allreduce");
    impl_->Break(status);
    return status;
  }
  if (op == ReduceOp::kAverage) {
    const float scale = 1.0f / static_cast<float>(n);
    for (float& x : data) x *= scale;
  }
  return Status::Ok();
}

Status Ring::AllReduce(const std::vector<std::span<float>>& tensors, size_t bucket_bytes,
                       ReduceOp op) {
  const size_t bucket_floats = bucket_bytes / sizeof(float);
  size_t i = 0;
  while (i < tensors.size()) {
    // The bucket is tensors [i, j): as many as fit in bucket_floats (at
    // least one).
    size_t j = i + 1, floats = tensors[i].size();
    while (j < tensors.size() && floats + tensors[j].size() <= bucket_floats) {
      floats += tensors[j].size();
      ++j;
    }
    if (j == i + 1) {
      EDL_RETURN_IF_ERROR(AllReduce(tensors[i], op));
    } else {
      std::vector<float>& fusion = impl_->fusion;
      fusion.resize(floats);
      size_t at = 0;
      for (size_t k = i; k < j; ++k) {
        std::copy(tensors[k].begin(), tensors[k].end(), fusion.begin() + at);
        at += tensors[k].size();
      }
      EDL_RETURN_IF_ERROR(AllReduce(std::span<float>(fusion), op));
      at = 0;
      for (size_t k = i; k < j; ++k) {
        std::copy_n(fusion.begin() + at, tensors[k].size(), tensors[k].begin());
        at += tensors[k].size();
      }
    }
    i = j;
  }
  return Status::Ok();
}

Status Ring::Broadcast(std::span<std::byte> data, int root) {
  RunningScope running(impl_->running);
  const int n = size();
  EDL_CHECK(root >= 0 && root < n) << "broadcast root " << root;
  EDL_RETURN_IF_ERROR(impl_->Usable(spec_));
  if (n == 1 || data.empty()) return Status::Ok();
  const bool is_root = rank() == root;
  const bool forwards = (rank() + 1) % n != root;
  auto& [sends, recvs] = impl_->pieces;
  sends.clear();
  recvs.clear();
  char* bytes = reinterpret_cast<char*>(data.data());
  for (size_t off = 0, k = 0; off < data.size(); off += spec_.piece_bytes, ++k) {
    size_t len = std::min(spec_.piece_bytes, data.size() - off);
    if (!is_root) recvs.push_back({bytes + off, len, false});
    if (forwards) sends.push_back({bytes + off, len, is_root ? 0 : k + 1});
  }
  Status status = RunPipeline(impl_->links, sends, recvs);
  if (!status.ok()) {
    status = status.WithPrefix(RingPrefix(spec_) + ": broadcast");
    impl_->Break(status);
  }
  return status;
}

}  // namespace edl::net
