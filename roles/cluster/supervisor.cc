#include "roles/cluster/supervisor.h"

#include <algorithm>
#include <limits>

#include "base/logging.h"

namespace edl::roles::cluster {
namespace {

constexpr int64_t kMinuteNanos = 60'000'000'000;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

}  // namespace

Supervisor::Supervisor(Cluster& cluster, Clock& clock, std::chrono::milliseconds grace_period)
    : cluster_(cluster),
      clock_(clock),
      grace_nanos_(std::chrono::duration_cast<std::chrono::nanoseconds>(grace_period).count()) {}

void Supervisor::OnExit(ExitCallback callback) { on_exit_ = std::move(callback); }

void Supervisor::OnGaveUp(GaveUpCallback callback) { on_gave_up_ = std::move(callback); }

Status Supervisor::Add(const ProcessSpec& spec, const RelaunchPolicy& policy) {
  std::lock_guard<std::mutex> lock(mu_);
  if (desired_.count(spec.name)) {
    return Status(StatusCode::kAlreadyExists, spec.name + " is already supervised");
  }
  if (stopping_.count(spec.name)) {
    return FailedPrecondition(spec.name + " is still being stopped");
  }
  EDL_RETURN_IF_ERROR(cluster_.Launch(spec));
  Entry& entry = desired_[spec.name];
  entry.spec = spec;
  entry.policy = policy;
  entry.running = true;
  return Status::Ok();
}

Status Supervisor::Adopt(const ProcessSpec& spec, const RelaunchPolicy& policy) {
  std::lock_guard<std::mutex> lock(mu_);
  if (desired_.count(spec.name)) {
    return Status(StatusCode::kAlreadyExists, spec.name + " is already supervised");
  }
  const std::vector<std::string> running = cluster_.Running();
  if (std::find(running.begin(), running.end(), spec.name) == running.end()) {
    return NotFound(spec.name + " does not run; nothing to adopt");
  }
  Entry& entry = desired_[spec.name];
  entry.spec = spec;
  entry.policy = policy;
  entry.running = true;
  return Status::Ok();
}

Status Supervisor::Remove(const std::string& name, int signal,
                          std::optional<std::chrono::milliseconds> grace) {
  std::lock_guard<std::mutex> lock(mu_);
  return RemoveLocked(name, signal, grace);
}

Status Supervisor::RemoveLocked(const std::string& name, int signal,
                                std::optional<std::chrono::milliseconds> grace) {
  auto it = desired_.find(name);
  if (it == desired_.end()) return NotFound(name + " is not supervised");
  bool running = it->second.running;
  desired_.erase(it);
  if (!running) return Status::Ok();  // was waiting for a delayed relaunch
  // NotFound: it has exited and its exit is queued; it is handled as a
  // removed process's exit all the same.
  Status s = cluster_.Signal(name, signal);
  if (!s.ok() && s.code() != StatusCode::kNotFound) {
    EDL_LOG(WARNING) << "supervisor: stopping " << name << ": " << s.ToString();
  }
  const int64_t grace_nanos =
      grace ? std::chrono::duration_cast<std::chrono::nanoseconds>(*grace).count() : grace_nanos_;
  stopping_[name] = signal == SIGKILL ? kNever : clock_.NowNanos() + grace_nanos;
  return Status::Ok();
}

Status Supervisor::SetDesired(const std::vector<ProcessSpec>& specs, const RelaunchPolicy& policy) {
  Status first;
  std::map<std::string, const ProcessSpec*> wanted;
  for (const ProcessSpec& spec : specs) wanted[spec.name] = &spec;
  std::vector<std::string> unwanted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, entry] : desired_) {
      if (!wanted.count(name)) unwanted.push_back(name);
    }
    for (const std::string& name : unwanted) {
      Status s = RemoveLocked(name, SIGTERM);
      if (first.ok()) first = s;
    }
    for (auto it = wanted.begin(); it != wanted.end();) {
      it = desired_.count(it->first) ? wanted.erase(it) : std::next(it);
    }
  }
  for (const auto& [name, spec] : wanted) {
    Status s = Add(*spec, policy);
    if (first.ok()) first = s;
  }
  return first;
}

void Supervisor::RemoveAll(int signal) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : desired_) names.push_back(name);
  for (const std::string& name : names) {
    Status s = RemoveLocked(name, signal);
    (void)s;  // every name is desired: cannot be NotFound
  }
}

int Supervisor::Step(std::chrono::milliseconds timeout) {
  std::vector<Event> events;
  int handled = 0;
  for (auto exit = cluster_.WaitExit(timeout); exit;
       exit = cluster_.WaitExit(std::chrono::milliseconds(0))) {
    std::lock_guard<std::mutex> lock(mu_);
    HandleExit(*exit, events);
    ++handled;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = clock_.NowNanos();
    std::vector<std::string> due;
    for (const auto& [name, entry] : desired_) {
      if (entry.relaunch_at && *entry.relaunch_at <= now) due.push_back(name);
    }
    for (const std::string& name : due) StartRelaunch(desired_.at(name), events);
    for (auto& [name, kill_at] : stopping_) {
      if (kill_at > now) continue;
      EDL_LOG(WARNING) << "supervisor: " << name << " still runs " << grace_nanos_ / 1'000'000
                       << " ms after being stopped; "
                       << "sending SIGKILL";
      Status s = cluster_.Signal(name, SIGKILL);
      (void)s;  // NotFound: it exited meanwhile
      kill_at = kNever;
    }
  }
  for (Event& event : events) event();
  return handled;
}

void Supervisor::HandleExit(const ProcessExit& exit, std::vector<Event>& events) {
  auto report = [&](bool will_relaunch) {
    if (on_exit_) events.push_back([this, exit, will_relaunch] { on_exit_(exit, will_relaunch); });
  };
  if (stopping_.erase(exit.name)) {
    EDL_LOG(INFO) << "supervisor: " << exit.ToString() << " (stopped)";
    return report(false);
  }
  auto it = desired_.find(exit.name);
  if (it == desired_.end() || !it->second.running) return report(false);
  Entry& entry = it->second;
  entry.running = false;
  if (exit.oom_killed) {
    // Relaunching with the same memory limit would only be killed again.
    report(false);
    return GiveUp(exit.name,
                  exit.ToString() +
                      "; not relaunched: raise its memory limit "
                      "(--worker_resource_limit / --ps_resource_limit memory=...)",
                  events);
  }
  if (exit.signaled || exit.disrupted) {
    EDL_LOG(WARNING) << "supervisor: " << exit.ToString() << "; relaunching";
    report(true);
    return Relaunch(entry, events);
  }
  if (exit.code == 0) {
    EDL_LOG(INFO) << "supervisor: " << exit.ToString();
    desired_.erase(it);
    return report(false);
  }
  if (entry.failure_relaunches < entry.policy.max_failure_relaunches) {
    ++entry.failure_relaunches;
    EDL_LOG(WARNING) << "supervisor: " << exit.ToString() << "; relaunching (failure relaunch "
                     << entry.failure_relaunches << " of " << entry.policy.max_failure_relaunches
                     << ")";
    report(true);
    return Relaunch(entry, events);
  }
  report(false);
  GiveUp(exit.name,
         exit.ToString() + " after " + std::to_string(entry.failure_relaunches) +
             " relaunch(es) on failure (limit " +
             std::to_string(entry.policy.max_failure_relaunches) + ")",
         events);
}

void Supervisor::Relaunch(Entry& entry, std::vector<Event>& events) {
  int64_t now = clock_.NowNanos();
  auto& recent = entry.recent_relaunches;
  while (!recent.empty() && recent.front() + kMinuteNanos <= now) recent.pop_front();
  if (static_cast<int>(recent.size()) < entry.policy.max_relaunches_per_minute) {
    return StartRelaunch(entry, events);
  }
  int64_t at = recent.empty() ? now + kMinuteNanos : recent.front() + kMinuteNanos;
  entry.relaunch_at = at;
  EDL_LOG(WARNING) << "supervisor: " << entry.spec.name << " was relaunched " << recent.size()
                   << " times in the last minute (limit " << entry.policy.max_relaunches_per_minute
                   << "), probably a crash loop; next relaunch in " << (at - now) / 1'000'000'000
                   << " s";
}

void Supervisor::StartRelaunch(Entry& entry, std::vector<Event>& events) {
  entry.relaunch_at.reset();
  Status s = cluster_.Launch(entry.spec);
  if (!s.ok()) {
    return GiveUp(entry.spec.name, "relaunch failed: " + s.ToString(), events);
  }
  entry.running = true;
  ++entry.relaunches;
  entry.recent_relaunches.push_back(clock_.NowNanos());
  EDL_LOG(INFO) << "supervisor: relaunched " << entry.spec.name << " (relaunch " << entry.relaunches
                << ")";
}

void Supervisor::GiveUp(std::string name, std::string reason, std::vector<Event>& events) {
  EDL_LOG(ERROR) << "supervisor: giving up on " << name << ": " << reason;
  desired_.erase(name);  // invalidates the Entry the caller may hold
  if (on_gave_up_) events.push_back([this, name, reason] { on_gave_up_(name, reason); });
}

std::vector<std::string> Supervisor::Desired() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : desired_) names.push_back(name);
  return names;
}

std::vector<std::string> Supervisor::Stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, kill_at] : stopping_) names.push_back(name);
  return names;
}

std::map<std::string, int> Supervisor::FailureRelaunches() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, int> out;
  for (const auto& [name, entry] : desired_) {
    if (entry.failure_relaunches > 0) out[name] = entry.failure_relaunches;
  }
  return out;
}

void Supervisor::SetFailureRelaunches(const std::string& name, int n) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = desired_.find(name);
  if (it != desired_.end()) it->second.failure_relaunches = n;
}

int64_t Supervisor::Relaunches(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = desired_.find(name);
  return it == desired_.end() ? 0 : it->second.relaunches;
}

bool Supervisor::RelaunchDelayed(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = desired_.find(name);
  return it != desired_.end() && it->second.relaunch_at.has_value();
}

}  // namespace edl::roles::cluster
