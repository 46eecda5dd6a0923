#include "roles/protocol/codec.h"

#include "roles/protocol/wire.h"

namespace edl::roles::protocol {
namespace {

// The least bytes a vector item takes on the wire (bounds vector counts by
// the bytes left before anything is allocated).
constexpr size_t kMinNamedTensorBytes = 2;     // name length + tensor marker
constexpr size_t kMinMetricStateBytes = 2;     // name length + state count
constexpr size_t kMinSparseGradientBytes = 3;  // table length + 2 markers
constexpr size_t kMinRingMemberBytes = 10;     // worker_id + 2 string lengths

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

// ---- Field layouts: Put (any writer) and Get mirror each other -----------

// An enum byte, refused unless <= max.
template <typename E>
E GetEnum(Reader& r, const char* field, E max) {
  const uint8_t v = r.U8(field);
  if (v > static_cast<uint8_t>(max)) {
    r.Fail("unknown value " + std::to_string(v) + " (at most " +
           std::to_string(static_cast<int>(max)) + ")");
    return E{};
  }
  return static_cast<E>(v);
}

template <typename W>
void Put(W& w, const NamedTensor& m) {
  w.String(m.name);
  w.Tensor(m.value);
}
void Get(Reader& r, NamedTensor* m) {
  m->name = r.String("name");
  m->value = r.Tensor("value");
}

template <typename W>
void Put(W& w, const MetricState& m) {
  w.String(m.name);
  w.Doubles(m.state);
}
void Get(Reader& r, MetricState* m) {
  m->name = r.String("name");
  m->state = r.Doubles("state");
}

template <typename W>
void Put(W& w, const SparseGradient& m) {
  w.String(m.table);
  w.Tensor(m.ids);
  w.Tensor(m.values);
}
void Get(Reader& r, SparseGradient* m) {
  m->table = r.String("table");
  m->ids = r.Tensor("ids");
  m->values = r.Tensor("values");
}

template <typename W>
void Put(W& w, const RingMember& m) {
  w.I64(m.worker_id);
  w.String(m.name);
  w.String(m.address);
}
void Get(Reader& r, RingMember* m) {
  m->worker_id = r.I64("worker_id");
  m->name = r.String("name");
  m->address = r.String("address");
}

template <typename W, typename T>
void PutVector(W& w, const std::vector<T>& v) {
  EDL_CHECK_LE(v.size(), kMaxVectorItems) << "vector too long for the wire";
  w.Varint(v.size());
  for (const T& item : v) Put(w, item);
}
template <typename T>
void GetVector(Reader& r, const char* field, size_t min_item_bytes, std::vector<T>* v) {
  const size_t n = r.Count(field, min_item_bytes);
  v->clear();
  v->reserve(n);
  for (size_t i = 0; i < n && r.ok(); ++i) {
    auto scope = r.Item(field, i);
    Get(r, &v->emplace_back());
  }
}

template <typename W>
void Put(W& w, const Task& m) {
  w.I64(m.id);
  w.U8(static_cast<uint8_t>(m.type));
  w.U8(static_cast<uint8_t>(m.dataset));
  w.I64(m.begin);
  w.I64(m.end);
  w.I32(m.epoch);
  w.I64(m.model_version);
  w.U64(m.seed);
}
void Get(Reader& r, Task* m) {
  m->id = r.I64("id");
  m->type = GetEnum(r, "type", TaskType::kDone);
  m->dataset = GetEnum(r, "dataset", Dataset::kPrediction);
  m->begin = r.I64("begin");
  m->end = r.I64("end");
  m->epoch = r.I32("epoch");
  m->model_version = r.I64("model_version");
  m->seed = r.U64("seed");
}

template <typename W>
void Put(W& w, const RegisterWorkerRequest& m) {
  w.String(m.name);
  w.I64(m.pid);
  w.I32(m.num_threads);
}
void Get(Reader& r, RegisterWorkerRequest* m) {
  m->name = r.String("name");
  m->pid = r.I64("pid");
  m->num_threads = r.I32("num_threads");
}

template <typename W>
void Put(W& w, const RegisterWorkerResponse& m) {
  w.I64(m.worker_id);
}
void Get(Reader& r, RegisterWorkerResponse* m) { m->worker_id = r.I64("worker_id"); }

template <typename W>
void Put(W& w, const HeartbeatRequest& m) {
  w.I64(m.worker_id);
}
void Get(Reader& r, HeartbeatRequest* m) { m->worker_id = r.I64("worker_id"); }

template <typename W>
void Put(W& w, const HeartbeatResponse& m) {
  w.Bool(m.stop);
}
void Get(Reader& r, HeartbeatResponse* m) { m->stop = r.Bool("stop"); }

template <typename W>
void Put(W& w, const GetTaskRequest& m) {
  w.I64(m.worker_id);
  w.I64(m.request);
}
void Get(Reader& r, GetTaskRequest* m) {
  m->worker_id = r.I64("worker_id");
  m->request = r.I64("request");
}

template <typename W>
void Put(W& w, const ReportTaskRequest& m) {
  w.I64(m.worker_id);
  w.I64(m.task_id);
  w.Bool(m.ok);
  w.String(m.error);
  w.I64(m.model_version);
  w.F64(m.loss_sum);
  w.I64(m.samples);
  w.I64(m.records_skipped);
  PutVector(w, m.metrics);
  w.Tensor(m.predictions);
}
void Get(Reader& r, ReportTaskRequest* m) {
  m->worker_id = r.I64("worker_id");
  m->task_id = r.I64("task_id");
  m->ok = r.Bool("ok");
  m->error = r.String("error");
  m->model_version = r.I64("model_version");
  m->loss_sum = r.F64("loss_sum");
  m->samples = r.I64("samples");
  m->records_skipped = r.I64("records_skipped");
  GetVector(r, "metrics", kMinMetricStateBytes, &m->metrics);
  m->predictions = r.Tensor("predictions");
}

template <typename W>
void Put(W&, const ReportTaskResponse&) {}
void Get(Reader&, ReportTaskResponse*) {}

template <typename W>
void Put(W& w, const PullDenseRequest& m) {
  w.I64(m.known_version);
}
void Get(Reader& r, PullDenseRequest* m) { m->known_version = r.I64("known_version"); }

template <typename W>
void Put(W& w, const PullDenseResponse& m) {
  w.I64(m.version);
  PutVector(w, m.params);
}
void Get(Reader& r, PullDenseResponse* m) {
  m->version = r.I64("version");
  GetVector(r, "params", kMinNamedTensorBytes, &m->params);
}

template <typename W>
void Put(W& w, const PullRowsRequest& m) {
  w.String(m.table);
  w.Tensor(m.ids);
}
void Get(Reader& r, PullRowsRequest* m) {
  m->table = r.String("table");
  m->ids = r.Tensor("ids");
}

template <typename W>
void Put(W& w, const PullRowsResponse& m) {
  w.Tensor(m.values);
}
void Get(Reader& r, PullRowsResponse* m) { m->values = r.Tensor("values"); }

template <typename W>
void Put(W& w, const PushGradientsRequest& m) {
  w.I64(m.worker_id);
  w.I64(m.version);
  PutVector(w, m.dense);
  PutVector(w, m.sparse);
  PutVector(w, m.state);
}
void Get(Reader& r, PushGradientsRequest* m) {
  m->worker_id = r.I64("worker_id");
  m->version = r.I64("version");
  GetVector(r, "dense", kMinNamedTensorBytes, &m->dense);
  GetVector(r, "sparse", kMinSparseGradientBytes, &m->sparse);
  GetVector(r, "state", kMinNamedTensorBytes, &m->state);
}

template <typename W>
void Put(W& w, const PushGradientsResponse& m) {
  w.Bool(m.accepted);
  w.I64(m.version);
}
void Get(Reader& r, PushGradientsResponse* m) {
  m->accepted = r.Bool("accepted");
  m->version = r.I64("version");
}

template <typename W>
void Put(W& w, const JoinRingRequest& m) {
  w.I64(m.worker_id);
  w.String(m.address);
}
void Get(Reader& r, JoinRingRequest* m) {
  m->worker_id = r.I64("worker_id");
  m->address = r.String("address");
}

template <typename W>
void Put(W& w, const RingViewRequest& m) {
  w.I64(m.worker_id);
  w.U64(m.known_version);
}
void Get(Reader& r, RingViewRequest* m) {
  m->worker_id = r.I64("worker_id");
  m->known_version = r.U64("known_version");
}

template <typename W>
void Put(W& w, const RingView& m) {
  w.U64(m.version);
  PutVector(w, m.members);
  w.I32(m.source_rank);
}
void Get(Reader& r, RingView* m) {
  m->version = r.U64("version");
  GetVector(r, "members", kMinRingMemberBytes, &m->members);
  m->source_rank = r.I32("source_rank");
}

template <typename W>
void Put(W& w, const RingSyncedRequest& m) {
  w.I64(m.worker_id);
  w.U64(m.version);
}
void Get(Reader& r, RingSyncedRequest* m) {
  m->worker_id = r.I64("worker_id");
  m->version = r.U64("version");
}

template <typename W>
void Put(W&, const RingSyncedResponse&) {}
void Get(Reader&, RingSyncedResponse*) {}

// ---- Framing ---------------------------------------------------------------

// Sizes the message first so the output is allocated once and every tensor
// costs one memcpy.
template <typename T>
std::string EncodeMessage(const T& m) {
  SizeCounter counter;
  counter.U8(0);
  counter.U8(0);
  Put(counter, m);
  Writer w(counter.size());
  w.U8(Traits<T>::kTag);
  w.U8(kWireVersion);
  Put(w, m);
  std::string out = std::move(w).Take();
  EDL_CHECK_EQ(out.size(), counter.size()) << Traits<T>::kName;
  return out;
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
  const char* name = Traits<T>::kName;
  if (bytes.size() < 2) {
    return InvalidArgument(std::string(name) + ": truncated: " + std::to_string(bytes.size()) +
                           " bytes, a message starts with a 2-byte tag and version");
  }
  const auto tag = static_cast<uint8_t>(bytes[0]);
  if (tag != Traits<T>::kTag) {
    return InvalidArgument(std::string(name) + ": expected tag " + std::to_string(Traits<T>::kTag) +
                           ", got tag " + std::to_string(tag) + " (" + MessageName(tag) + ")");
  }
  const auto version = static_cast<uint8_t>(bytes[1]);
  if (version != kWireVersion) {
    return InvalidArgument(std::string(name) + ": wire version " + std::to_string(version) +
                           ", this build speaks version " + std::to_string(kWireVersion));
  }
  Reader r(bytes, name);
  r.U8("tag");
  r.U8("version");
  T m;
  Get(r, &m);
  EDL_RETURN_IF_ERROR(r.Finish());
  return m;
}

#define EDL_PROTOCOL_CODEC(Type)                                 \
  std::string Encode(const Type& m) { return EncodeMessage(m); } \
  template Result<Type> Decode<Type>(std::string_view bytes);
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
