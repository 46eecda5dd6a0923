// The records of the master's journal (docs/distributed.md, 'A master that
// survives its own death'): one per change of the master's state, written
// by MasterCore under its lock and replayed through the same code when a
// new master recovers (roles/master/master_core.h).
// Each record is a kind byte and its fields in the wire format of
// roles/protocol/wire.h; a report carries the worker's ReportTaskRequest
// without its prediction rows (the sink has kept those).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "roles/protocol/messages.h"

namespace edl::roles::master {

enum class Event : uint8_t {
  kJob = 1,          // the first record of a job: its shape (to refuse others')
  kRecovered,        // a new master took over
  kRegister,         // name, pid, num_threads
  kLease,            // worker id, request number, task id
  kReport,           // ReportTaskRequest (no predictions)
  kTick,             // workers declared dead, task leases expired
  kExit,             // name
  kTarget,           // workers wanted
  kStop,             // name asked to leave
  kFail,             // reason (ends a running or succeeded job)
  kJoinRing,         // worker id, address
  kRingSynced,       // version
  kTrainingStarted,  // wall-clock nanoseconds (for the report's rate)
  kTrainingEnded,    // wall-clock nanoseconds
  kRedo,             // PS name, the done training tasks queued again for it
};
inline constexpr uint8_t kMaxEvent = static_cast<uint8_t>(Event::kRedo);

std::string EncodeJob(std::string_view shape);
std::string EncodeRecovered();
std::string EncodeRegister(const std::string& name, int64_t pid, int num_threads);
std::string EncodeLease(int64_t worker_id, int64_t request, int64_t task_id);
std::string EncodeReport(const protocol::ReportTaskRequest& r);
std::string EncodeTick(const std::vector<int64_t>& dead, const std::vector<int64_t>& expired);
std::string EncodeName(Event kind, const std::string& name);  // kExit, kStop
std::string EncodeTarget(int n);
std::string EncodeFail(const std::string& reason);
std::string EncodeJoin(int64_t worker_id, const std::string& address);
std::string EncodeSynced(uint64_t version);
std::string EncodeTrainingStarted(int64_t nanos);
std::string EncodeTrainingEnded(int64_t nanos);
std::string EncodeRedo(const std::string& ps, const std::vector<int64_t>& task_ids);

// A decoded record: the fields its kind uses.
struct MasterEvent {
  Event kind = Event::kJob;
  std::string text;                    // shape, name, reason, address, PS
  int64_t worker_id = 0;               // lease, join
  int64_t pid = 0;                     // register
  int32_t num_threads = 0;             // register
  int64_t request = 0;                 // lease
  int64_t task_id = 0;                 // lease
  int64_t number = 0;                  // target, ring version
  std::vector<int64_t> dead, expired;  // tick; expired: redo's tasks
  protocol::ReportTaskRequest report;  // report
};

// InvalidArgument naming the kind and field for anything malformed.
Result<MasterEvent> DecodeEvent(std::string_view record);

}  // namespace edl::roles::master
