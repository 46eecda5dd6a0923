#include "roles/master/master_events.h"

#include "roles/protocol/codec.h"
#include "roles/protocol/wire.h"

namespace edl::roles::master {

using protocol::Reader;
using protocol::Writer;

namespace {

Writer Start(Event kind) {
  Writer w;
  w.U8(static_cast<uint8_t>(kind));
  return w;
}

void PutIds(Writer& w, const std::vector<int64_t>& ids) {
  w.Varint(ids.size());
  for (int64_t id : ids) w.I64(id);
}

std::vector<int64_t> GetIds(Reader& r, const char* field) {
  std::vector<int64_t> ids(r.Count(field, 8));
  for (int64_t& id : ids) id = r.I64(field);
  return ids;
}

}  // namespace

std::string EncodeJob(std::string_view shape) {
  Writer w = Start(Event::kJob);
  w.String(shape);
  return std::move(w).Take();
}

std::string EncodeRecovered() { return Start(Event::kRecovered).Take(); }

std::string EncodeRegister(const std::string& name, int64_t pid, int num_threads) {
  Writer w = Start(Event::kRegister);
  w.String(name);
  w.I64(pid);
  w.I32(num_threads);
  return std::move(w).Take();
}

std::string EncodeLease(int64_t worker_id, int64_t request, int64_t task_id) {
  Writer w = Start(Event::kLease);
  w.I64(worker_id);
  w.I64(request);
  w.I64(task_id);
  return std::move(w).Take();
}

std::string EncodeReport(const protocol::ReportTaskRequest& r) {
  Writer w = Start(Event::kReport);
  if (r.predictions.defined()) {
    // Without its rows (the sink kept them): zero rows of the same columns
    // and dtype, so a new master still checks the parts that follow.
    protocol::ReportTaskRequest copy = r;
    tensor::Shape shape = r.predictions.shape();
    if (!shape.empty()) shape[0] = 0;
    copy.predictions = tensor::Tensor::Zeros(shape, r.predictions.dtype());
    w.String(protocol::Encode(copy));
  } else {
    w.String(protocol::Encode(r));
  }
  return std::move(w).Take();
}

std::string EncodeTick(const std::vector<int64_t>& dead, const std::vector<int64_t>& expired) {
  Writer w = Start(Event::kTick);
  PutIds(w, dead);
  PutIds(w, expired);
  return std::move(w).Take();
}

std::string EncodeRedo(const std::string& ps, const std::vector<int64_t>& task_ids) {
  Writer w = Start(Event::kRedo);
  w.String(ps);
  PutIds(w, task_ids);
  return std::move(w).Take();
}

std::string EncodeName(Event kind, const std::string& name) {
  Writer w = Start(kind);
  w.String(name);
  return std::move(w).Take();
}

std::string EncodeTarget(int n) {
  Writer w = Start(Event::kTarget);
  w.I64(n);
  return std::move(w).Take();
}

std::string EncodeFail(const std::string& reason) { return EncodeName(Event::kFail, reason); }

std::string EncodeJoin(int64_t worker_id, const std::string& address) {
  Writer w = Start(Event::kJoinRing);
  w.I64(worker_id);
  w.String(address);
  return std::move(w).Take();
}

std::string EncodeSynced(uint64_t version) {
  Writer w = Start(Event::kRingSynced);
  w.I64(static_cast<int64_t>(version));
  return std::move(w).Take();
}

std::string EncodeTrainingStarted(int64_t nanos) {
  Writer w = Start(Event::kTrainingStarted);
  w.I64(nanos);
  return std::move(w).Take();
}

std::string EncodeTrainingEnded(int64_t nanos) {
  Writer w = Start(Event::kTrainingEnded);
  w.I64(nanos);
  return std::move(w).Take();
}

Result<MasterEvent> DecodeEvent(std::string_view record) {
  Reader r(record, "journal record");
  MasterEvent e;
  const uint8_t kind = r.U8("kind");
  if (r.ok() && (kind == 0 || kind > kMaxEvent)) {
    return InvalidArgument("journal record: unknown kind " + std::to_string(kind));
  }
  e.kind = static_cast<Event>(kind);
  switch (e.kind) {
    case Event::kJob:
    case Event::kExit:
    case Event::kStop:
    case Event::kFail: e.text = r.String("text"); break;
    case Event::kRecovered: break;
    case Event::kRegister:
      e.text = r.String("name");
      e.pid = r.I64("pid");
      e.num_threads = r.I32("num_threads");
      break;
    case Event::kLease:
      e.worker_id = r.I64("worker_id");
      e.request = r.I64("request");
      e.task_id = r.I64("task_id");
      break;
    case Event::kReport: {
      const std::string bytes = r.String("report");
      if (!r.ok()) break;
      Result<protocol::ReportTaskRequest> report =
          protocol::Decode<protocol::ReportTaskRequest>(bytes);
      if (!report.ok()) return report.status().WithPrefix("journal record");
      e.report = std::move(*report);
      break;
    }
    case Event::kTick:
      e.dead = GetIds(r, "dead");
      e.expired = GetIds(r, "expired");
      break;
    case Event::kRedo:
      e.text = r.String("ps");
      e.expired = GetIds(r, "tasks");
      break;
    case Event::kTarget:
    case Event::kRingSynced:
    case Event::kTrainingStarted:
    case Event::kTrainingEnded: e.number = r.I64("number"); break;
    case Event::kJoinRing:
      e.worker_id = r.I64("worker_id");
      e.text = r.String("address");
      break;
  }
  EDL_RETURN_IF_ERROR(r.Finish());
  return e;
}

}  // namespace edl::roles::master
