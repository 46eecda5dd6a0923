#include "tests/testing/master_kill.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "tests/testing/job_report.h"

namespace edl::testing {

int MasterPid(const std::string& jobs_dir, const std::string& job) {
  const std::string path = jobs_dir + "/" + job + "/master.json";
  if (!std::filesystem::exists(path)) return -1;
  nlohmann::json a = nlohmann::json::parse(ReadText(path), nullptr, false);
  return a.is_object() ? a.value("pid", -1) : -1;
}

int Restarts(const nlohmann::json& status) {
  return status.is_object() ? status.value("master_restarts", -1) : -1;
}

void KillMaster(const std::string& jobs_dir, const std::string& job, EdlProcess& job_process) {
  const int before = Restarts(JobStatus(jobs_dir, job));
  const int pid = MasterPid(jobs_dir, job);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  WaitForNewMaster(jobs_dir, job, pid, before, job_process);
}

void WaitForNewMaster(const std::string& jobs_dir, const std::string& job, int killed_pid,
                      int restarts_before, EdlProcess& job_process) {
  // The new master answers (on the same port) a moment before it has
  // written its address file: both must show it.
  ASSERT_TRUE(WaitFor(
      [&] {
        return Restarts(JobStatus(jobs_dir, job)) == restarts_before + 1 &&
               MasterPid(jobs_dir, job) > 0 && MasterPid(jobs_dir, job) != killed_pid;
      },
      60))
      << job_process.Err();
}

}  // namespace edl::testing
