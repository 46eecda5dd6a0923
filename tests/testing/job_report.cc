#include "tests/testing/job_report.h"

#include <regex>

#include "tests/testing/run_edl.h"

namespace edl::testing {
namespace {

int CountEpochs(const std::string& out, const std::string& tail) {
  std::regex re("epoch [0-9]+: ([0-9]+)/([0-9]+) records trained, 0 missing" + tail);
  int n = 0;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator();
       ++it) {
    if ((*it)[1] == (*it)[2]) ++n;
  }
  return n;
}

}  // namespace

double Metric(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("(^|[ :])" + name + " ([0-9.eE+-]+)"))) return -1;
  return std::stod(m[2]);
}

int EpochsWithNothingMissing(const std::string& out) { return CountEpochs(out, ""); }

int EpochsTrainedExactlyOnce(const std::string& out) {
  return CountEpochs(out, ", 0 trained twice");
}

nlohmann::json JobStatus(const std::string& jobs_dir, const std::string& job) {
  RunResult r = RunEdl({"status", job, "--jobs_dir=" + jobs_dir});
  if (r.exit_code != 0) return nullptr;
  return nlohmann::json::parse(r.out, nullptr, false);
}

int64_t Version(const nlohmann::json& s) {
  return s.is_object() ? s.value("model_version", int64_t{-1}) : -1;
}

}  // namespace edl::testing
