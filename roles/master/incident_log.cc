// The job's membership incidents (roles/master/incident_log.h).
#include "roles/master/incident_log.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace edl::roles::master {
namespace {

double Seconds(int64_t nanos) { return static_cast<double>(nanos) * 1e-9; }

// Seconds from `from` to `to`, or null when `to` has not happened.
nlohmann::json Span(std::optional<int64_t> from, std::optional<int64_t> to) {
  if (!from || !to) return nullptr;
  return Seconds(*to - *from);
}

// "13:04:05.2": the UTC time of day of `unix_s`.
std::string TimeOfDay(double unix_s) {
  const double day = std::fmod(unix_s, 86400.0);
  const int h = static_cast<int>(day / 3600), m = static_cast<int>(std::fmod(day, 3600.0) / 60);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%04.1f", h, m, std::fmod(day, 60.0));
  return buf;
}

std::string Cell(const nlohmann::json& seconds) {
  if (seconds.is_null()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", seconds.get<double>());
  return buf;
}

}  // namespace

Incident* IncidentLog::Open(const std::string& worker) {
  for (auto it = incidents_.rbegin(); it != incidents_.rend(); ++it) {
    if (it->worker == worker) return it->first_task_nanos ? nullptr : &*it;
  }
  return nullptr;
}

void IncidentLog::OnLost(const std::string& worker, const std::string& cause,
                         int64_t last_seen_nanos, int64_t now_nanos, int64_t unix_nanos,
                         int64_t tasks_put_back, int64_t records_put_back) {
  if (incidents_.size() == max_) {
    incidents_.erase(incidents_.begin());
    ++dropped_;
  }
  Incident i;
  i.worker = worker;
  i.cause = cause;
  i.last_seen_nanos = last_seen_nanos;
  i.detected_nanos = now_nanos;
  i.detected_unix_nanos = unix_nanos;
  i.tasks_put_back = tasks_put_back;
  i.records_put_back = records_put_back;
  incidents_.push_back(std::move(i));
}

void IncidentLog::OnReplacementRequested(const std::string& worker, int64_t now_nanos) {
  Incident* i = Open(worker);
  if (i != nullptr && !i->requested_nanos && !i->registered_nanos) i->requested_nanos = now_nanos;
}

void IncidentLog::OnRegistered(const std::string& worker, int64_t now_nanos) {
  Incident* i = Open(worker);
  if (i != nullptr && !i->registered_nanos) i->registered_nanos = now_nanos;
}

std::vector<std::string> IncidentLog::AwaitingReplacement() const {
  std::vector<std::string> out;
  for (const Incident& i : incidents_) {
    if (!i.registered_nanos) out.push_back(i.worker);
  }
  return out;
}

void IncidentLog::OnPendingReason(const std::string& worker, const std::string& reason) {
  Incident* i = Open(worker);
  if (i != nullptr && !i->registered_nanos && !reason.empty()) i->pending_reason = reason;
}

void IncidentLog::OnTrainingTask(const std::string& worker, int64_t now_nanos) {
  Incident* i = Open(worker);
  if (i != nullptr && i->registered_nanos) i->first_task_nanos = now_nanos;
}

void IncidentLog::OnCheckpointFailed(const std::string& ps, int64_t failed_version,
                                     int64_t last_good_version, int64_t failures,
                                     const std::string& error, int64_t unix_nanos) {
  CheckpointIncident* open = nullptr;
  for (auto it = checkpoints_.rbegin(); it != checkpoints_.rend(); ++it) {
    if (it->ps == ps) {
      if (!it->recovered_version) open = &*it;
      break;
    }
  }
  if (open == nullptr) {
    if (checkpoints_.size() == max_) {
      checkpoints_.erase(checkpoints_.begin());
      ++dropped_;
    }
    checkpoints_.push_back({});
    open = &checkpoints_.back();
    open->ps = ps;
    open->first_failed_version = failed_version;
    open->detected_unix_nanos = unix_nanos;
  }
  open->last_failed_version = failed_version;
  open->last_good_version = last_good_version;
  open->failures = failures;
  open->error = error;
}

void IncidentLog::OnCheckpointWritten(const std::string& ps, int64_t version) {
  for (auto it = checkpoints_.rbegin(); it != checkpoints_.rend(); ++it) {
    if (it->ps != ps) continue;
    if (!it->recovered_version && version > it->last_good_version) {
      it->recovered_version = version;
    }
    return;
  }
}

nlohmann::json IncidentLog::CheckpointsToJson() const {
  nlohmann::json out = earlier_checkpoints_.empty() ? nlohmann::json::array()
                                                    : nlohmann::json::parse(earlier_checkpoints_);
  for (const CheckpointIncident& c : checkpoints_) {
    out.push_back({{"ps", c.ps},
                   {"first_failed_version", c.first_failed_version},
                   {"last_failed_version", c.last_failed_version},
                   {"last_good_version", c.last_good_version},
                   {"failures", c.failures},
                   {"error", c.error},
                   {"detected_unix_s", Seconds(c.detected_unix_nanos)},
                   {"recovered_version", c.recovered_version ? nlohmann::json(*c.recovered_version)
                                                             : nlohmann::json(nullptr)}});
  }
  return out;
}

std::string IncidentLog::ToSaved() const {
  return nlohmann::json{{"incidents", ToJson()}, {"checkpoints", CheckpointsToJson()}}.dump();
}

bool IncidentLog::Restore(const std::string& saved) {
  const nlohmann::json j = nlohmann::json::parse(saved, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("incidents") || !j["incidents"].is_array() ||
      !j.contains("checkpoints") || !j["checkpoints"].is_array()) {
    return false;
  }
  // Each entry must be one ToJson/CheckpointsToJson wrote: the table reads its fields.
  for (const nlohmann::json& i : j["incidents"]) {
    if (!i.is_object() || !i.contains("worker") || !i["worker"].is_string() ||
        !i.contains("cause") || !i["cause"].is_string() || !i.contains("detected_unix_s") ||
        !i["detected_unix_s"].is_number() || !i.contains("pending_reason") ||
        !i["pending_reason"].is_string() || !i.contains("tasks_put_back") ||
        !i["tasks_put_back"].is_number_integer() || !i.contains("records_put_back") ||
        !i["records_put_back"].is_number_integer()) {
      return false;
    }
    for (const char* span : {"detection_s", "to_request_s", "pending_s", "to_step_s"}) {
      if (!i.contains(span) || !(i[span].is_number() || i[span].is_null())) return false;
    }
  }
  for (const nlohmann::json& c : j["checkpoints"]) {
    if (!c.is_object() || !c.contains("ps") || !c["ps"].is_string() || !c.contains("error") ||
        !c["error"].is_string()) {
      return false;
    }
  }
  earlier_incidents_ = j["incidents"].dump();
  earlier_checkpoints_ = j["checkpoints"].dump();
  return true;
}

nlohmann::json IncidentLog::ToJson() const {
  nlohmann::json out = earlier_incidents_.empty() ? nlohmann::json::array()
                                                  : nlohmann::json::parse(earlier_incidents_);
  for (const Incident& i : incidents_) {
    // Without a request seen (a process that came back on its own, or a
    // cluster that relaunches by itself) the pending time runs from the
    // detection.
    const std::optional<int64_t> requested = i.requested_nanos;
    const std::optional<int64_t> pending_from = requested ? requested : i.detected_nanos;
    out.push_back({{"worker", i.worker},
                   {"cause", i.cause},
                   {"detected_unix_s", Seconds(i.detected_unix_nanos)},
                   {"detection_s", Seconds(i.detected_nanos - i.last_seen_nanos)},
                   {"to_request_s", Span(i.detected_nanos, requested)},
                   {"pending_s", Span(pending_from, i.registered_nanos)},
                   {"to_step_s", Span(i.registered_nanos, i.first_task_nanos)},
                   {"tasks_put_back", i.tasks_put_back},
                   {"records_put_back", i.records_put_back},
                   {"pending_reason", i.pending_reason}});
  }
  return out;
}

std::string IncidentLog::ToTable() const {
  const nlohmann::json all = ToJson();
  std::string out;
  for (const nlohmann::json& c : CheckpointsToJson()) {
    const int64_t good = c.value("last_good_version", int64_t{-1});
    out += "  " + c.value("ps", std::string()) + ": " + std::to_string(c.value("failures", 0)) +
           " checkpoint attempt(s) failed from version " +
           std::to_string(c.value("first_failed_version", int64_t{0})) + " to " +
           std::to_string(c.value("last_failed_version", int64_t{0})) + " (last good " +
           (good < 0 ? std::string("none") : "version " + std::to_string(good)) + "; " +
           (c.contains("recovered_version") && c["recovered_version"].is_number_integer()
                ? "a good one again at version " +
                      std::to_string(c["recovered_version"].get<int64_t>())
                : std::string("none good since")) +
           "): " + c.value("error", std::string()) + "\n";
  }
  if (!out.empty()) out = "checkpoint incidents:\n" + out;
  if (all.empty()) return out;
  out += "incidents (seconds; put back = tasks/records trained again):\n";
  char line[1024];
  std::snprintf(line, sizeof line, "  %-12s %10s %9s %10s %9s %9s %12s  %s\n", "worker", "at (UTC)",
                "detection", "to_request", "pending", "to_step", "put_back", "cause");
  out += line;
  for (const nlohmann::json& j : all) {
    std::string cause = j["cause"].get<std::string>();
    const std::string reason = j["pending_reason"].get<std::string>();
    if (!reason.empty()) cause += " (replacement pending: " + reason + ")";
    const std::string put_back = std::to_string(j["tasks_put_back"].get<int64_t>()) + "/" +
                                 std::to_string(j["records_put_back"].get<int64_t>());
    std::snprintf(line, sizeof line, "  %-12s %10s %9s %10s %9s %9s %12s  %s\n",
                  j["worker"].get<std::string>().c_str(),
                  TimeOfDay(j["detected_unix_s"].get<double>()).c_str(),
                  Cell(j["detection_s"]).c_str(), Cell(j["to_request_s"]).c_str(),
                  Cell(j["pending_s"]).c_str(), Cell(j["to_step_s"]).c_str(), put_back.c_str(),
                  cause.c_str());
    out += line;
  }
  if (dropped_ > 0) out += "  (" + std::to_string(dropped_) + " older incidents not kept)\n";
  return out;
}

}  // namespace edl::roles::master
