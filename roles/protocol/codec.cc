#include "roles/protocol/codec.h"

#include <type_traits>

#include "roles/protocol/wire.h"

namespace edl::roles::protocol {
namespace {

template <typename T>
struct Traits;
#define EDL_PROTOCOL_MESSAGE(Type)                                             \
  template <>                                                                  \
  struct Traits<Type> {                                                        \
    static constexpr uint8_t kTag = static_cast<uint8_t>(MessageTag::k##Type); \
    static constexpr const char* kName = #Type;                                \
  };
EDL_PROTOCOL_MESSAGE(Task)
EDL_PROTOCOL_MESSAGE(RegisterWorkerRequest)
EDL_PROTOCOL_MESSAGE(RegisterWorkerResponse)
EDL_PROTOCOL_MESSAGE(HeartbeatRequest)
EDL_PROTOCOL_MESSAGE(HeartbeatResponse)
EDL_PROTOCOL_MESSAGE(GetTaskRequest)
EDL_PROTOCOL_MESSAGE(ReportTaskRequest)
EDL_PROTOCOL_MESSAGE(ReportTaskResponse)
EDL_PROTOCOL_MESSAGE(PullDenseRequest)
EDL_PROTOCOL_MESSAGE(PullDenseResponse)
EDL_PROTOCOL_MESSAGE(PullRowsRequest)
EDL_PROTOCOL_MESSAGE(PullRowsResponse)
EDL_PROTOCOL_MESSAGE(PushGradientsRequest)
EDL_PROTOCOL_MESSAGE(PushGradientsResponse)
EDL_PROTOCOL_MESSAGE(JoinRingRequest)
EDL_PROTOCOL_MESSAGE(RingViewRequest)
EDL_PROTOCOL_MESSAGE(RingView)
EDL_PROTOCOL_MESSAGE(RingSyncedRequest)
EDL_PROTOCOL_MESSAGE(RingSyncedResponse)
#undef EDL_PROTOCOL_MESSAGE

// ---- One field list per message -------------------------------------------
//
// Fields(v, m) names every field of m in wire order; the writers (any
// SizeCounter or Writer, through PutField) and the reader (GetField) walk
// the same list, so a field cannot be written one way and read another.
// M is the message type, const for writing.

template <typename T>
using Bare = std::remove_const_t<T>;

#define EDL_FIELDS(Type)                 \
  template <typename V, typename M>      \
  requires std::is_same_v<Bare<M>, Type> \
  void Fields(V& v, M& m)

EDL_FIELDS(NamedTensor) {
  v("name", m.name);
  v("value", m.value);
}
EDL_FIELDS(MetricState) {
  v("name", m.name);
  v("state", m.state);
}
EDL_FIELDS(SparseGradient) {
  v("table", m.table);
  v("ids", m.ids);
  v("values", m.values);
}
EDL_FIELDS(RingMember) {
  v("worker_id", m.worker_id);
  v("name", m.name);
  v("address", m.address);
}
EDL_FIELDS(Task) {
  v("id", m.id);
  v("type", m.type);
  v("dataset", m.dataset);
  v("begin", m.begin);
  v("end", m.end);
  v("epoch", m.epoch);
  v("model_version", m.model_version);
  v("seed", m.seed);
}
EDL_FIELDS(RegisterWorkerRequest) {
  v("name", m.name);
  v("pid", m.pid);
  v("num_threads", m.num_threads);
}
EDL_FIELDS(RegisterWorkerResponse) { v("worker_id", m.worker_id); }
EDL_FIELDS(HeartbeatRequest) { v("worker_id", m.worker_id); }
EDL_FIELDS(HeartbeatResponse) { v("stop", m.stop); }
EDL_FIELDS(GetTaskRequest) {
  v("worker_id", m.worker_id);
  v("request", m.request);
}
EDL_FIELDS(ReportTaskRequest) {
  v("worker_id", m.worker_id);
  v("task_id", m.task_id);
  v("ok", m.ok);
  v("error", m.error);
  v("model_version", m.model_version);
  v("loss_sum", m.loss_sum);
  v("samples", m.samples);
  v("records_skipped", m.records_skipped);
  v("metrics", m.metrics);
  v("predictions", m.predictions);
}
EDL_FIELDS(ReportTaskResponse) { v("counted", m.counted); }
EDL_FIELDS(PullDenseRequest) {
  v("known_version", m.known_version);
  v("compression", m.compression);
}
EDL_FIELDS(PullDenseResponse) {
  v("version", m.version);
  v("params", m.params);
}
EDL_FIELDS(PullRowsRequest) {
  v("table", m.table);
  v("ids", m.ids);
}
EDL_FIELDS(PullRowsResponse) { v("values", m.values); }
EDL_FIELDS(PushGradientsRequest) {
  v("worker_id", m.worker_id);
  v("version", m.version);
  v("task_id", m.task_id);
  v("minibatch", m.minibatch);
  v("settled_task", m.settled_task);
  v("settled_minibatches", m.settled_minibatches);
  v("dense", m.dense);
  v("sparse", m.sparse);
  v("state", m.state);
  v("pull_dense", m.pull_dense);
  v("pull_compression", m.pull_compression);
}
EDL_FIELDS(PushGradientsResponse) {
  v("accepted", m.accepted);
  v("version", m.version);
  v("duplicate", m.duplicate);
  v("behind", m.behind);
  v("task_taken", m.task_taken);
  v("params_version", m.params_version);
  v("params", m.params);
}
EDL_FIELDS(JoinRingRequest) {
  v("worker_id", m.worker_id);
  v("address", m.address);
}
EDL_FIELDS(RingViewRequest) {
  v("worker_id", m.worker_id);
  v("known_version", m.known_version);
}
EDL_FIELDS(RingView) {
  v("version", m.version);
  v("members", m.members);
  v("source_rank", m.source_rank);
}
EDL_FIELDS(RingSyncedRequest) {
  v("worker_id", m.worker_id);
  v("version", m.version);
}
EDL_FIELDS(RingSyncedResponse) {}
#undef EDL_FIELDS

// The largest value of each enum on the wire (a larger byte is refused).
constexpr TaskType EnumMax(TaskType) { return TaskType::kDone; }
constexpr Dataset EnumMax(Dataset) { return Dataset::kPrediction; }
constexpr Compression EnumMax(Compression) { return Compression::kFloat16; }

// The least bytes a vector item takes on the wire (bounds vector counts by
// the bytes left before anything is allocated).
constexpr size_t MinItemBytes(const NamedTensor*) { return 2; }     // name length + tensor marker
constexpr size_t MinItemBytes(const MetricState*) { return 2; }     // name length + state count
constexpr size_t MinItemBytes(const SparseGradient*) { return 3; }  // table length + 2 markers
constexpr size_t MinItemBytes(const RingMember*) { return 10; }     // worker_id + 2 string lengths

// Writes one field with any writer.
template <typename W>
struct PutField {
  W& w;
  void operator()(const char*, const int64_t& x) { w.I64(x); }
  void operator()(const char*, const int32_t& x) { w.I32(x); }
  void operator()(const char*, const uint64_t& x) { w.U64(x); }
  void operator()(const char*, const double& x) { w.F64(x); }
  void operator()(const char*, const bool& x) { w.Bool(x); }
  void operator()(const char*, const std::string& x) { w.String(x); }
  void operator()(const char*, const std::vector<double>& x) { w.Doubles(x); }
  void operator()(const char*, const tensor::Tensor& x) { w.Tensor(x); }
  template <typename E>
  requires std::is_enum_v<E>
  void operator()(const char*, const E& x) { w.U8(static_cast<uint8_t>(x)); }
  template <typename T>
  void operator()(const char*, const std::vector<T>& items) {
    EDL_CHECK_LE(items.size(), kMaxVectorItems) << "vector too long for the wire";
    w.Varint(items.size());
    for (const T& item : items) Fields(*this, item);
  }
};

// Reads one field, naming it in any error.
struct GetField {
  Reader& r;
  void operator()(const char* f, int64_t& x) { x = r.I64(f); }
  void operator()(const char* f, int32_t& x) { x = r.I32(f); }
  void operator()(const char* f, uint64_t& x) { x = r.U64(f); }
  void operator()(const char* f, double& x) { x = r.F64(f); }
  void operator()(const char* f, bool& x) { x = r.Bool(f); }
  void operator()(const char* f, std::string& x) { x = r.String(f); }
  void operator()(const char* f, std::vector<double>& x) { x = r.Doubles(f); }
  void operator()(const char* f, tensor::Tensor& x) { x = r.Tensor(f); }
  template <typename E>
  requires std::is_enum_v<E>
  void operator()(const char* f, E& x) {
    const uint8_t v = r.U8(f);
    constexpr E kMax = EnumMax(E{});
    if (v > static_cast<uint8_t>(kMax)) {
      r.Fail("unknown value " + std::to_string(v) + " (at most " +
             std::to_string(static_cast<int>(kMax)) + ")");
      x = E{};
      return;
    }
    x = static_cast<E>(v);
  }
  template <typename T>
  void operator()(const char* f, std::vector<T>& items) {
    const size_t n = r.Count(f, MinItemBytes(static_cast<const T*>(nullptr)));
    items.clear();
    items.reserve(n);
    for (size_t i = 0; i < n && r.ok(); ++i) {
      auto scope = r.Item(f, i);
      Fields(*this, items.emplace_back());
    }
  }
};

// ---- Framing ---------------------------------------------------------------

// Sizes the message first so owned pieces are allocated once; tensors are
// borrowed or cost one memcpy.
template <typename T>
net::Payload EncodeMessage(const T& m) {
  SizeCounter counter;
  counter.U8(0);
  counter.U8(0);
  PutField<SizeCounter> count{counter};
  Fields(count, m);
  Writer w(counter.size());
  w.U8(Traits<T>::kTag);
  w.U8(kWireVersion);
  PutField<Writer> put{w};
  Fields(put, m);
  net::Payload out = std::move(w).TakePayload();
  EDL_CHECK_EQ(out.size(), counter.size()) << Traits<T>::kName;
  return out;
}

template <typename T, typename Input>
Result<T> DecodeMessage(const Input& bytes) {
  const char* name = Traits<T>::kName;
  const std::string_view view(bytes.data(), bytes.size());
  if (view.size() < 2) {
    return InvalidArgument(std::string(name) + ": truncated: " + std::to_string(view.size()) +
                           " bytes, a message starts with a 2-byte tag and version");
  }
  const auto tag = static_cast<uint8_t>(view[0]);
  if (tag != Traits<T>::kTag) {
    return InvalidArgument(std::string(name) + ": expected tag " + std::to_string(Traits<T>::kTag) +
                           ", got tag " + std::to_string(tag) + " (" + MessageName(tag) + ")");
  }
  const auto version = static_cast<uint8_t>(view[1]);
  if (version != kWireVersion) {
    return InvalidArgument(std::string(name) + ": wire version " + std::to_string(version) +
                           ", this build speaks version " + std::to_string(kWireVersion));
  }
  Reader r(bytes, name);
  r.U8("tag");
  r.U8("version");
  T m;
  GetField get{r};
  Fields(get, m);
  EDL_RETURN_IF_ERROR(r.Finish());
  return m;
}

}  // namespace

const char* MessageName(uint8_t tag) {
  static constexpr const char* kNames[] = {
      "unknown",
      Traits<Task>::kName,
      Traits<RegisterWorkerRequest>::kName,
      Traits<RegisterWorkerResponse>::kName,
      Traits<HeartbeatRequest>::kName,
      Traits<HeartbeatResponse>::kName,
      Traits<GetTaskRequest>::kName,
      Traits<ReportTaskRequest>::kName,
      Traits<ReportTaskResponse>::kName,
      Traits<PullDenseRequest>::kName,
      Traits<PullDenseResponse>::kName,
      Traits<PullRowsRequest>::kName,
      Traits<PullRowsResponse>::kName,
      Traits<PushGradientsRequest>::kName,
      Traits<PushGradientsResponse>::kName,
      Traits<JoinRingRequest>::kName,
      Traits<RingViewRequest>::kName,
      Traits<RingView>::kName,
      Traits<RingSyncedRequest>::kName,
      Traits<RingSyncedResponse>::kName,
  };
  static_assert(std::size(kNames) == kMaxMessageTag + 1);
  return tag <= kMaxMessageTag ? kNames[tag] : kNames[0];
}

template <typename T>
Result<T> Decode(std::string_view bytes) {
  return DecodeMessage<T>(bytes);
}

template <typename T>
Result<T> Decode(const net::Bytes& bytes) {
  return DecodeMessage<T>(bytes);
}

#define EDL_PROTOCOL_CODEC(Type)                                           \
  std::string Encode(const Type& m) { return EncodeMessage(m).Flatten(); } \
  net::Payload EncodePayload(const Type& m) { return EncodeMessage(m); }   \
  template Result<Type> Decode<Type>(std::string_view bytes);              \
  template Result<Type> Decode<Type>(const net::Bytes& bytes);
EDL_PROTOCOL_CODEC(Task)
EDL_PROTOCOL_CODEC(RegisterWorkerRequest)
EDL_PROTOCOL_CODEC(RegisterWorkerResponse)
EDL_PROTOCOL_CODEC(HeartbeatRequest)
EDL_PROTOCOL_CODEC(HeartbeatResponse)
EDL_PROTOCOL_CODEC(GetTaskRequest)
EDL_PROTOCOL_CODEC(ReportTaskRequest)
EDL_PROTOCOL_CODEC(ReportTaskResponse)
EDL_PROTOCOL_CODEC(PullDenseRequest)
EDL_PROTOCOL_CODEC(PullDenseResponse)
EDL_PROTOCOL_CODEC(PullRowsRequest)
EDL_PROTOCOL_CODEC(PullRowsResponse)
EDL_PROTOCOL_CODEC(PushGradientsRequest)
EDL_PROTOCOL_CODEC(PushGradientsResponse)
EDL_PROTOCOL_CODEC(JoinRingRequest)
EDL_PROTOCOL_CODEC(RingViewRequest)
EDL_PROTOCOL_CODEC(RingView)
EDL_PROTOCOL_CODEC(RingSyncedRequest)
EDL_PROTOCOL_CODEC(RingSyncedResponse)
#undef EDL_PROTOCOL_CODEC

}  // namespace edl::roles::protocol
