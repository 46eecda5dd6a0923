#include "roles/job/state_configmap.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "base/file.h"
#include "base/logging.h"
#include "kube/base64.h"
#include "kube/client.h"

namespace edl::roles::job {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// How long a new master waits out an API server that fails (5xx,
// throttling, a restart: no answer) before its Restore fails.
constexpr auto kOutageTolerance = std::chrono::seconds(60);

// The API server may answer differently in a moment; any other answer
// (NotFound, Conflict, Invalid, Forbidden) is final.
bool Transient(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kInternal ||
         s.code() == StatusCode::kResourceExhausted || s.code() == StatusCode::kDeadlineExceeded;
}

// Calls `attempt` until it succeeds, fails for good, or kOutageTolerance
// passes (its last answer then), backing off from 0.25 s to 4 s.
template <typename T>
Result<T> WhileTransient(const std::string& what, const std::function<Result<T>()>& attempt) {
  const auto deadline = std::chrono::steady_clock::now() + kOutageTolerance;
  auto wait = std::chrono::milliseconds(250);
  while (true) {
    Result<T> r = attempt();
    if (r.ok() || !Transient(r.status()) || std::chrono::steady_clock::now() + wait > deadline) {
      return r;
    }
    EDL_LOG(WARNING) << what << ": " << r.status().message() << "; retrying in " << wait.count()
                     << " ms";
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::milliseconds(4000));
  }
}

}  // namespace

StateConfigMap::StateConfigMap(kube::Client& client, std::string ns, std::string name, Json owner)
    : client_(client), ns_(std::move(ns)), name_(std::move(name)), owner_(std::move(owner)) {}

Result<bool> StateConfigMap::Restore(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<Json> got = WhileTransient<Json>("reading ConfigMap " + name_, [&]() -> Result<Json> {
    auto r = client_.Get(kube::ConfigMaps(), ns_, name_);
    if (r.ok() || r.status().code() != StatusCode::kNotFound) return r;
    Json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name_}, {"labels", {{"edl-role", "master-state"}}}}}};
    if (!owner_.empty()) cm["metadata"]["ownerReferences"] = owner_;
    r = client_.Create(kube::ConfigMaps(), ns_, cm);
    // A create that landed though its answer was lost: read it.
    if (!r.ok() && r.status().code() == StatusCode::kAlreadyExists) {
      return Unavailable(r.status().message());
    }
    return r;
  });
  if (!got.ok()) return got.status().WithPrefix("the master's state in ConfigMap " + name_);
  resource_version_ = (*got)["metadata"].value("resourceVersion", "");
  keys_ = Json::object();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create: " + ec.message());
  bool any = false;
  const Json files = (*got).value("binaryData", Json::object());
  for (const auto& [key, value] : files.items()) {
    std::optional<std::string> bytes = kube::Base64Decode(value.get<std::string>());
    if (!bytes || key.find('/') != std::string::npos) {
      return IoError("ConfigMap " + name_ + ": binaryData." + key + " is not a state file");
    }
    EDL_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + key, *bytes));
    keys_[key] = value;
    any = true;
  }
  return any;
}

Status StateConfigMap::Save(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  Json data = Json::object();
  size_t bytes = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (name.find(".tmp") != std::string::npos) continue;  // an atomic write in flight
    EDL_ASSIGN_OR_RETURN(std::string content, ReadFile(e.path().string()));
    data[name] = kube::Base64Encode(content);
    bytes += data[name].get<std::string>().size();
  }
  if (ec) return IoError(dir + ": cannot list: " + ec.message());
  if (bytes > kMaxStateBytes) {
    return Status(StatusCode::kResourceExhausted,
                  "the master's state (" + std::to_string(bytes) +
                      " bytes in base64) no longer fits ConfigMap " + name_ + " (at most " +
                      std::to_string(kMaxStateBytes) +
                      "): give the job --checkpoint_dir on a --volume");
  }
  // Only what changed travels: the journal that grew, a new snapshot.
  Json patch_data = Json::object();
  for (const auto& [key, value] : data.items()) {
    if (!keys_.contains(key) || keys_[key] != value) patch_data[key] = value;
  }
  for (const auto& [key, unused] : keys_.items()) {
    if (!data.contains(key)) patch_data[key] = nullptr;  // a file gone (an old journal)
  }
  if (patch_data.empty()) return Status::Ok();
  const Json patch = {{"metadata", {{"resourceVersion", resource_version_}}},
                      {"binaryData", patch_data}};
  // One attempt: a master that cannot save exits, and the next one waits
  // out the API server in Restore (a wait here would hold the workers'
  // replies for as long).
  auto r = client_.Patch(kube::ConfigMaps(), ns_, name_, patch);
  if (!r.ok()) {
    if (r.status().code() == StatusCode::kAborted) {
      return Status(StatusCode::kAborted, "ConfigMap " + name_ +
                                              " was written by another master: this one "
                                              "no longer owns the job's state");
    }
    return r.status().WithPrefix("saving the master's state to ConfigMap " + name_);
  }
  resource_version_ = (*r)["metadata"].value("resourceVersion", "");
  keys_ = std::move(data);
  return Status::Ok();
}

}  // namespace edl::roles::job
