// How errors and logs name a task on both sides of the wire: "training data
// records [4096, 4608)". A worker prefixes its task errors with the name;
// the master, which names the task itself, strips it so that a failure
// reason says the range once.
#pragma once

#include <string>

#include "roles/protocol/messages.h"

namespace edl::roles::protocol {

std::string TaskRangeName(const Task& task);

// `error` without a leading "<TaskRangeName(task)>: ".
std::string WithoutTaskRangeName(const Task& task, const std::string& error);

}  // namespace edl::roles::protocol
