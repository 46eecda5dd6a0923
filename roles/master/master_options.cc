#include "roles/master/master_options.h"

#include <string>

namespace edl::roles::master {
namespace {

Status Bad(const std::string& field, const std::string& want, const std::string& got) {
  return InvalidArgument("master: " + field + " must be " + want + ", got " + got);
}

}  // namespace

Status ValidateMasterOptions(const MasterOptions& o) {
  if (o.minibatch_size <= 0) {
    return Bad("minibatch_size", "> 0", std::to_string(o.minibatch_size));
  }
  if (o.num_minibatches_per_task <= 0) {
    return Bad("num_minibatches_per_task", "> 0", std::to_string(o.num_minibatches_per_task));
  }
  if (o.minibatch_size > (int64_t{1} << 40) / o.num_minibatches_per_task) {
    return Bad(
        "minibatch_size * num_minibatches_per_task", "<= 2^40",
        std::to_string(o.minibatch_size) + " * " + std::to_string(o.num_minibatches_per_task));
  }
  if (o.num_epochs < 1) {
    return Bad("num_epochs", ">= 1", std::to_string(o.num_epochs));
  }
  const int64_t per_task = o.minibatch_size * o.num_minibatches_per_task;
  struct Set {
    const char* name;
    int64_t records;
    const std::vector<int64_t>& files;
  };
  const Set sets[] = {{"training", o.records.training, o.records.training_files},
                      {"validation", o.records.validation, o.records.validation_files},
                      {"prediction", o.records.prediction, o.records.prediction_files}};
  for (const auto& [name, records, files] : sets) {
    if (records < 0) {
      return Bad(std::string(name) + " records", ">= 0", std::to_string(records));
    }
    int64_t sum = 0, tasks = 0;
    for (int64_t n : files) {
      if (n < 0) return Bad(std::string(name) + " file records", ">= 0", std::to_string(n));
      sum += n;
      tasks += (n + per_task - 1) / per_task;
    }
    if (!files.empty() && sum != records) {
      return Bad(std::string(name) + " file records", "summing to " + std::to_string(records),
                 std::to_string(sum));
    }
    if (files.empty()) tasks = (records + per_task - 1) / per_task;
    if (tasks > (int64_t{1} << 32) - 1) {
      return InvalidArgument(std::string("master: ") + name + " data of " +
                             std::to_string(records) +
                             " records makes more than 2^32 tasks; raise "
                             "minibatch_size or num_minibatches_per_task");
    }
  }
  if (o.records.training == 0 && o.records.validation == 0 && o.records.prediction == 0) {
    return InvalidArgument(
        "master: the job has no data (training, validation and prediction "
        "data are all empty)");
  }
  if (!(o.lease_timeout_s > 0)) {
    return Bad("lease_timeout_s", "> 0", std::to_string(o.lease_timeout_s));
  }
  if (!(o.heartbeat_timeout_s > 0)) {
    return Bad("heartbeat_timeout_s", "> 0", std::to_string(o.heartbeat_timeout_s));
  }
  if (o.max_task_failures < 1) {
    return Bad("max_task_failures", ">= 1", std::to_string(o.max_task_failures));
  }
  if (o.max_task_losses < 0) {
    return Bad("max_task_losses", ">= 0 (0 = unlimited)", std::to_string(o.max_task_losses));
  }
  if (o.target_workers < 0) {
    return Bad("target_workers", ">= 0 (0 = any)", std::to_string(o.target_workers));
  }
  return Status::Ok();
}

}  // namespace edl::roles::master
