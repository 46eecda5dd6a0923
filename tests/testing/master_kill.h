// Killing a local-cluster job's master outright (SIGKILL), for tests of a
// master that survives its own death.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/run_edl.h"

namespace edl::testing {

// The pid of the job's master now (from its address file); -1 if none.
int MasterPid(const std::string& jobs_dir, const std::string& job);
// The status's master_restarts; -1 without a status.
int Restarts(const nlohmann::json& status);
// Kills the master with SIGKILL and waits until a new one serves the job
// (gtest failures otherwise, naming `job_process`'s output).
void KillMaster(const std::string& jobs_dir, const std::string& job, EdlProcess& job_process);
// Waits until a new master serves the job after the one with pid
// `killed_pid` died, the job having had `restarts_before` master restarts
// (gtest failures otherwise, naming `job_process`'s output).
void WaitForNewMaster(const std::string& jobs_dir, const std::string& job, int killed_pid,
                      int restarts_before, EdlProcess& job_process);

}  // namespace edl::testing
