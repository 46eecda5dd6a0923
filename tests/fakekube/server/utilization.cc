#include "tests/fakekube/server/utilization.h"

#include <cerrno>
#include <cstring>
#include <map>

namespace edl::fakekube {

UtilizationRecorder::UtilizationRecorder(Store& store, const std::vector<NodeSpec>& nodes,
                                         std::string path, std::chrono::milliseconds interval)
    : store_(store), path_(std::move(path)), interval_(interval) {
  for (const NodeSpec& n : nodes) {
    auto it = n.capacity.find("cpu");
    if (it != n.capacity.end()) capacity_milli_cpu_ += it->second;
  }
}

UtilizationRecorder::~UtilizationRecorder() { Stop(); }

Status UtilizationRecorder::Start() {
  std::string jobs_path = path_;
  if (jobs_path.size() > 4 && jobs_path.compare(jobs_path.size() - 4, 4, ".csv") == 0) {
    jobs_path.resize(jobs_path.size() - 4);
  }
  jobs_path += ".jobs.csv";
  totals_ = std::fopen(path_.c_str(), "w");
  jobs_ = std::fopen(jobs_path.c_str(), "w");
  if (!totals_ || !jobs_) {
    return IoError("--utilization_csv " + path_ + ": " + std::strerror(errno));
  }
  std::fprintf(totals_,
               "time_s,capacity_cpu,allocated_cpu,utilization,running_pods,pending_pods\n");
  std::fprintf(jobs_, "time_s,job,allocated_cpu,running_pods,pending_pods\n");
  start_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      SampleOnce();
      lock.lock();
      cv_.wait_for(lock, interval_, [&] { return stop_; });
    }
  });
  return Status::Ok();
}

void UtilizationRecorder::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (totals_) std::fclose(totals_);
  if (jobs_) std::fclose(jobs_);
  totals_ = jobs_ = nullptr;
}

void UtilizationRecorder::SampleOnce() {
  if (!totals_) return;
  auto list = store_.List("pods", "", "", "");
  if (!list.ok()) return;
  struct JobSample {
    int64_t milli_cpu = 0;
    int running = 0, pending = 0;
  };
  std::map<std::string, JobSample> jobs;
  int64_t allocated = 0;
  int running = 0, pending = 0;
  for (const Json& pod : list.value->items) {
    const std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
    if (phase == "Succeeded" || phase == "Failed") continue;
    std::string job = "-";
    if (pod.contains("metadata") && pod["metadata"].contains("labels")) {
      job = pod["metadata"]["labels"].value("edl-job", "-");
    }
    JobSample& j = jobs[job];
    const bool bound = pod.contains("spec") && !pod["spec"].value("nodeName", "").empty();
    if (!bound) {
      ++pending;
      ++j.pending;
      continue;
    }
    auto requests = PodRequests(pod);
    const int64_t cpu = requests.ok() && requests->count("cpu") ? requests->at("cpu") : 0;
    allocated += cpu;
    j.milli_cpu += cpu;
    ++running;
    ++j.running;
  }
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double capacity = capacity_milli_cpu_ / 1000.0;
  std::fprintf(totals_, "%.2f,%.3f,%.3f,%.4f,%d,%d\n", t, capacity, allocated / 1000.0,
               capacity > 0 ? allocated / 1000.0 / capacity : 0.0, running, pending);
  for (const auto& [name, j] : jobs) {
    std::fprintf(jobs_, "%.2f,%s,%.3f,%d,%d\n", t, name.c_str(), j.milli_cpu / 1000.0, j.running,
                 j.pending);
  }
  std::fflush(totals_);
  std::fflush(jobs_);
}

}  // namespace edl::fakekube
