// Flags shared by every command that loads a model (train, evaluate,
// predict), registered on a CLI11 subcommand and parsed into ModelOptions.
#pragma once

namespace CLI {
class App;
}

#include "roles/job_options.h"

namespace edl::cmd {

void AddModelFlags(CLI::App& app, roles::ModelOptions& o);
// --log_level; applied by ApplyCommonFlags after parsing.
struct CommonFlags {
  std::string log_level = "INFO";
};
void AddCommonFlags(CLI::App& app, CommonFlags& f);
// Returns false (after printing a one-line error) if a value is invalid.
bool ApplyCommonFlags(const CommonFlags& f);

}  // namespace edl::cmd
