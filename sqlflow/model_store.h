// ModelStore: where `edl sql` keeps trained models under their INTO names,
// and where USING finds them. In the database (the default, as SQLFlow
// does): table edl_models holds each file of the model's export (model.json,
// weights.bin, checkpoint/...) as blobs of at most 512 KiB, and
// edl_model_info the statement that trained it and when; a model is saved
// in one transaction, so it is there whole or not at all. With --model_dir:
// a directory per model, moved into place when complete.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "data/sql_connection.h"
#include "data/sql_url.h"

namespace edl::sqlflow {

class ModelStore {
 public:
  virtual ~ModelStore() = default;

  // Models in `model_dir` when it is set, else in the database of `url`
  // through `db` (borrowed; must outlive the store).
  static Result<std::unique_ptr<ModelStore>> Open(const data::SqlUrl& url, data::SqlConnection* db,
                                                  const std::string& model_dir);

  virtual Result<bool> Exists(const std::string& name) = 0;
  // Stores the files under `export_dir` as model `name`. AlreadyExists
  // naming the model unless `overwrite`.
  virtual Status Save(const std::string& name, const std::string& export_dir,
                      const std::string& statement, bool overwrite) = 0;
  // Writes model `name`'s files under `dir` (created). NotFound naming the
  // model and where models are kept.
  virtual Status Load(const std::string& name, const std::string& dir) = 0;
  // "table edl_models of DATABASE" or the directory: for messages.
  virtual std::string where() const = 0;
};

// A model name: letters, digits, '_', '-' and '.', not starting with '.'.
Status CheckModelName(const std::string& name);

}  // namespace edl::sqlflow
