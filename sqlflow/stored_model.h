// A model `edl sql` stored in a database (sqlflow/model_store.h), named by
// a URL where a checkpoint directory is expected: DATABASE?model=NAME, e.g.
// --checkpoint_dir_for_init=postgresql://edl@db/analytics?model=income_dnn.
// The processes of a job on Kubernetes load the model from the database
// themselves (with --database_secret's password), so `edl sql` predicts and
// evaluates there without a shared volume.
#pragma once

#include <string>

#include "base/status.h"

namespace edl::sqlflow {

// Whether `value` is a database URL with a model= parameter.
bool IsStoredModelUrl(const std::string& value);
// `database` (as --database takes it) with model=NAME.
std::string StoredModelUrl(const std::string& database, const std::string& name);
// Writes the model's files into a directory of this process's own (once
// per URL; removed when the process exits) and returns it. Errors name the
// URL: the database unreachable, no such model.
Result<std::string> FetchStoredModel(const std::string& url);

}  // namespace edl::sqlflow
