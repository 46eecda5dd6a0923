#include "roles/protocol/task_name.h"

namespace edl::roles::protocol {

std::string TaskRangeName(const Task& task) {
  const char* data = task.dataset == Dataset::kTraining     ? "training"
                     : task.dataset == Dataset::kValidation ? "validation"
                                                            : "prediction";
  return std::string(data) + " data records [" + std::to_string(task.begin) + ", " +
         std::to_string(task.end) + ")";
}

std::string WithoutTaskRangeName(const Task& task, const std::string& error) {
  const std::string prefix = TaskRangeName(task) + ": ";
  return error.compare(0, prefix.size(), prefix) == 0 ? error.substr(prefix.size()) : error;
}

}  // namespace edl::roles::protocol
