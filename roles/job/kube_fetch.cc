#include "roles/job/kube_fetch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "base/logging.h"
#include "kube/client.h"
#include "net/rpc.h"
#include "roles/cluster/kube_resources.h"
#include "roles/job/held_outputs.h"
#include "roles/job/kube_job.h"
#include "roles/job/kube_job_parts.h"

namespace edl::roles::job {
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// Puts `tmp` (complete) at `target`, replacing what was there only once the
// new one is in place (and restoring it if that fails).
Status SwapInto(const fs::path& tmp, const fs::path& target, const std::string& flag) {
  std::error_code ec;
  const bool replacing = fs::exists(target, ec);
  const fs::path old = target.string() + ".old." + std::to_string(::getpid());
  if (replacing) {
    fs::rename(target, old, ec);
    if (ec)
      return IoError(flag + " " + target.string() + ": cannot move it aside: " + ec.message());
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    if (replacing) fs::rename(old, target, ec);
    return IoError(flag + " " + target.string() + ": cannot rename it into place: " + why);
  }
  if (replacing) fs::remove_all(old, ec);
  return Status::Ok();
}

// Moves every file under `tmp` to the same place under `target` (created),
// replacing a file there of the same name, then removes `tmp`.
Status MergeInto(const fs::path& tmp, const fs::path& target, const std::string& flag) {
  std::error_code ec;
  fs::create_directories(target, ec);
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(tmp, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), tmp, ec));
  }
  for (const fs::path& f : files) {
    fs::create_directories((target / f).parent_path(), ec);
    fs::rename(tmp / f, target / f, ec);
    if (ec)
      return IoError(flag + " " + target.string() + ": cannot put " + f.string() +
                     " in place: " + ec.message());
  }
  fs::remove_all(tmp, ec);
  return Status::Ok();
}

}  // namespace

Result<std::vector<FetchedOutput>> HoldOutputsInPod(MasterProcessOptions* m) {
  EDL_ASSIGN_OR_RETURN(auto volumes, cluster::ParseVolumes("--volume", m->kube.volume));
  auto on_volume = [&](const std::string& path) { return cluster::OnVolume(path, volumes); };
  // One directory a submission (in a test's fake cluster, pods share /tmp).
  std::random_device random;
  const std::string pod_dir = std::string(kHeldOutputsDir) + "/" + m->job.job_name + "-" +
                              std::to_string(random() % 1000000000u);
  std::vector<FetchedOutput> fetch;
  std::error_code ec;
  // The outputs are put in place by renaming: a path must name something
  // below its parent.
  for (const auto& [flag, path] :
       {std::pair<const char*, std::string>{"--output", m->output},
        std::pair<const char*, std::string>{"--output", m->prediction_output}}) {
    fs::path p = fs::path(path).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();
    const std::string name = p.filename().string();
    if (!path.empty() && !on_volume(path) && (name.empty() || name == "." || name == "..")) {
      return InvalidArgument(std::string(flag) + " " + path +
                             ": name a file or directory below the current one (as ./out)");
    }
  }
  if (!m->output.empty() && !on_volume(m->output)) {
    if (m->allreduce) {
      return InvalidArgument("--output " + m->output +
                             ": with AllreduceStrategy the ring's rank 0 exports the model in "
                             "its worker pod; put --output on a --volume");
    }
    const fs::path local = fs::path(m->output).lexically_normal();
    if (fs::exists(local, ec) &&
        !(fs::is_directory(local, ec) && fs::exists(local / "model.json", ec))) {
      return InvalidArgument("--output " + m->output +
                             ": exists and is not an edl export (no model.json); refusing to "
                             "replace it");
    }
    fetch.push_back({"output", m->output});
    m->output = pod_dir + "/output";
  }
  if (!m->prediction_output.empty() && !on_volume(m->prediction_output)) {
    const std::string& p = m->prediction_output;
    const bool dir = p.back() == '/' || fs::is_directory(p, ec);
    std::string name = fs::path(p).lexically_normal().filename().string();
    if (name.empty()) name = fs::path(p).lexically_normal().parent_path().filename().string();
    fetch.push_back({"prediction_output", p});
    m->prediction_output = pod_dir + "/prediction_output/" + name + (dir ? "/" : "");
  }
  if (!fetch.empty()) m->kube.hold_outputs_s = kHoldOutputsSeconds;
  return fetch;
}

OutputFetcher::OutputFetcher(const KubeJobOptions& access, std::string job, std::string secret,
                             std::vector<FetchedOutput> outputs)
    : access_(access),
      job_(std::move(job)),
      secret_(std::move(secret)),
      outputs_(std::move(outputs)),
      result_(FailedPrecondition("not fetched")) {
  thread_ = std::thread([this] { Run(); });
}

OutputFetcher::~OutputFetcher() { (void)Finish(); }

Status OutputFetcher::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (fetched_) return result_;
  std::string names;
  for (const FetchedOutput& o : outputs_) names += (names.empty() ? "" : ", ") + o.local;
  return FailedPrecondition("job " + job_ + " ended before its outputs (" + names +
                            ") were fetched from its master pod" +
                            (last_error_.empty() ? "" : " (last answer: " + last_error_ + ")"));
}

void OutputFetcher::Run() {
  auto connection = ConnectToKube(access_);
  if (!connection.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = connection.status().message();
    return;
  }
  kube::Client& client = *connection->client;
  const std::string base = "/api/v1/namespaces/" + connection->ns + "/services/" +
                           MasterName(job_) + ":" + std::to_string(kKubeMasterPort) + "/proxy";
  const std::vector<std::pair<std::string, std::string>> auth = {
      {net::kRelayedAuthorizationHeader, "Bearer " + secret_}};
  auto post = [&](const char* path, const std::string& body) {
    return client.PostRaw(base + path, body, "application/json", auth);
  };
  // A chunk is asked for again (it is the same bytes) through a proxy or
  // API server that fails for a while: 6 tries over about a minute.
  auto chunk = [&](int64_t file, int64_t offset) -> Result<std::string> {
    auto wait = std::chrono::seconds(2);
    for (int attempt = 1;; ++attempt) {
      auto r = post(kChunkPath, Json{{"file", file}, {"offset", offset}}.dump());
      if (r.ok() || attempt == 6) return r;
      EDL_LOG(WARNING) << "job " << job_ << ": fetching an output: " << r.status().message()
                       << "; again in " << wait.count() << " s";
      std::this_thread::sleep_for(wait);
      wait *= 2;
    }
  };
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, std::chrono::seconds(2), [this] { return stop_; })) return;
    }
    auto listing = post(kOutputsPath, "{}");
    if (!listing.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      last_error_ = listing.status().message();
      continue;
    }
    // The outputs are ready: fetch every file into a temporary beside its
    // output, then swap each in.
    std::map<std::string, fs::path> targets, tmp;
    for (const FetchedOutput& o : outputs_) {
      fs::path target = fs::path(o.local).lexically_normal();
      if (target.filename().empty()) target = target.parent_path();
      targets[o.name] = target;
      tmp[o.name] = target.string() + ".fetch." + std::to_string(::getpid());
      std::error_code ec;
      fs::remove_all(tmp[o.name], ec);
      if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
    }
    Status s = [&]() -> Status {
      std::set<std::string> names;
      for (const FetchedOutput& o : outputs_) names.insert(o.name);
      auto files = ParseOutputList(*listing, names);
      if (!files.ok()) return files.status().WithPrefix("job " + job_);
      int64_t i = 0, bytes = 0;
      for (const HeldFile& f : *files) {
        const std::string& output = f.output;
        const std::string& path = f.path;
        const int64_t size = f.size;
        const fs::path dest = path.empty() ? tmp[output] : tmp[output] / path;
        std::error_code ec;
        if (!path.empty()) fs::create_directories(dest.parent_path(), ec);
        std::ofstream out(dest, std::ios::binary | std::ios::trunc);
        if (!out) return IoError("cannot write " + dest.string());
        for (int64_t offset = 0; offset < size;) {
          EDL_ASSIGN_OR_RETURN(std::string bytes_here, chunk(i, offset));
          if (bytes_here.empty() || static_cast<int64_t>(bytes_here.size()) > size - offset) {
            return IoError("job " + job_ + ": " + output + " file " + path + " came as " +
                           std::to_string(bytes_here.size()) + " bytes at " +
                           std::to_string(offset) + " of " + std::to_string(size));
          }
          out.write(bytes_here.data(), static_cast<std::streamsize>(bytes_here.size()));
          offset += static_cast<int64_t>(bytes_here.size());
        }
        out.close();
        if (!out) return IoError("cannot write " + dest.string() + " (disk full?)");
        bytes += size;
        ++i;
      }
      for (const FetchedOutput& o : outputs_) {
        std::error_code ec;
        if (!fs::exists(tmp[o.name], ec)) fs::create_directories(tmp[o.name], ec);
        if (o.name == "prediction_output" && fs::is_directory(tmp[o.name], ec)) {
          // A directory of prediction parts joins what the directory holds,
          // replacing files of the same names only, as a local job does.
          EDL_RETURN_IF_ERROR(MergeInto(tmp[o.name], targets[o.name], "--output"));
        } else {
          EDL_RETURN_IF_ERROR(SwapInto(tmp[o.name], targets[o.name], "--" + o.name));
        }
        EDL_LOG(INFO) << "fetched --" << o.name << " " << o.local << " from the master pod";
      }
      EDL_LOG(DEBUG) << "fetched " << i << " files, " << bytes << " bytes";
      return Status::Ok();
    }();
    if (!s.ok()) {
      for (const auto& [name, path] : tmp) {
        std::error_code ec;
        fs::remove_all(path, ec);
      }
    }
    // Released either way: the master need not wait out its limit. It ends
    // as soon as it hears this, often before its answer is through the
    // proxy, so a failed answer is the expected one (a master that heard
    // nothing ends after its limit).
    auto released = post(kFetchedPath, "{}");
    if (!released.ok()) EDL_LOG(DEBUG) << "job " << job_ << ": " << released.status().message();
    std::lock_guard<std::mutex> lock(mu_);
    fetched_ = true;
    result_ = s;
    return;
  }
}

}  // namespace edl::roles::job
