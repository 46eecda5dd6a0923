// Reading what a finished `edl train` job printed (its end-of-job report on
// stdout) and what `edl status` says about a running local job, for the
// tests that run the edl binary.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace edl::testing {

// The number after `name` ("accuracy 0.9012" -> 0.9012); -1 when absent.
double Metric(const std::string& text, const std::string& name);

// How many "epoch N: R/R records trained, 0 missing" lines the report has.
int EpochsWithNothingMissing(const std::string& out);
// Likewise, and "0 trained twice": every record exactly once.
int EpochsTrainedExactlyOnce(const std::string& out);

// `edl status JOB --jobs_dir=DIR` as JSON; null while the master is not
// reachable.
nlohmann::json JobStatus(const std::string& jobs_dir, const std::string& job);
// Its model version, -1 when unknown.
int64_t Version(const nlohmann::json& status);

}  // namespace edl::testing
