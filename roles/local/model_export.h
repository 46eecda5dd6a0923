// Model export: the directory `edl train --output` writes, usable both by
// TF.js / Keras tooling and by edl itself:
//   <dir>/model.json, <dir>/weights.bin   TF.js layers-model
//   <dir>/checkpoint/version-N/           edl checkpoint (spec + weights)
// Written into a temporary directory and renamed into place, replacing an
// earlier export at the same path only once the new one is complete.
#pragma once

#include <string>

#include "base/status.h"
#include "roles/local/compiled_model.h"

namespace edl::roles {

Status ExportModel(const CompiledModel& cm, const std::string& dir);

}  // namespace edl::roles
