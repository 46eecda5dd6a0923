// Executor: runs SQLFlow statements (sqlflow/statement.h) against a
// database. Each statement's work is an ordinary edl job (edl train,
// predict or evaluate) run as a child process of the edl binary, with the
// flags the user gave `edl sql` besides its own (so a statement runs Local,
// on the local cluster or wherever those flags say); its output passes
// through. What happens around the job:
//   TO TRAIN     the SELECT planned (sqlflow/select_plan.h), the features'
//                statistics computed in SQL (sqlflow/feature_spec.h), the
//                model spec written (canned, zoo or file), and the trained
//                export saved under the INTO name (sqlflow/model_store.h)
//   TO PREDICT   the model loaded from the store, predictions for every
//                selected row written with the row's key into a new table
//                (sqlflow/result_table.h)
//   TO EVALUATE  the model loaded, its metrics on the selected rows written
//                into a table (metric, value)
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "sqlflow/statement.h"

namespace edl::sqlflow {

struct ExecutorOptions {
  std::string database;   // sqlite:PATH or postgresql://USER@HOST/DB[?...]
  std::string model_dir;  // "" = models in the database
  bool overwrite = false;
  std::vector<std::string> job_flags;  // passed to each job
  std::string edl_binary;              // the edl that runs the jobs
  // The jobs run on Kubernetes (--cluster=kube): their pods load stored
  // models from the database (sqlflow/stored_model.h), and their outputs
  // come back to this machine (docs/kubernetes.md).
  bool kube = false;
};

// Runs `s`. Errors name the statement's position and what is wrong; a job
// that fails is an error naming its command and exit code (its own message
// is on stderr already).
Status ExecuteStatement(const Statement& s, const ExecutorOptions& options);

}  // namespace edl::sqlflow
