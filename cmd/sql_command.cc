// edl sql: SQLFlow's extended SELECT statements (sqlflow/).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "base/file.h"
#include "cmd/commands.h"
#include "sqlflow/executor.h"
#include "sqlflow/statement.h"

namespace edl::cmd {

Runner AddSqlCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand(
      "sql",
      "Run SQLFlow statements: SELECT ... TO TRAIN / TO PREDICT / TO EVALUATE on a database "
      "(docs/sql.md). Flags it does not know (--distribution_strategy, --num_workers, "
      "--cluster, ...) go to the edl train, predict or evaluate job each statement runs");
  app->allow_extras();
  struct Flags {
    std::string statement;
    std::string file;
    std::string database;
    std::string model_dir;
    bool overwrite = false;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("STATEMENT", f->statement,
                  "The statements (separated by ';'); or give them in a file with -f");
  app->add_option("-f,--file", f->file, "Read the statements from this file ('-': stdin)");
  app->add_option("--database", f->database,
                  "The database: sqlite:PATH or postgresql://USER@HOST[:PORT]/DB[?sslmode=...] "
                  "(the password from PGPASSWORD or ~/.pgpass, never the URL)")
      ->required();
  app->add_option("--model_dir", f->model_dir,
                  "Keep trained models in this directory (one subdirectory per INTO name) "
                  "instead of the database's edl_models table");
  app->add_flag("--overwrite", f->overwrite,
                "Replace a model or result table that already exists (else it is an error)");
  return [app, f]() {
    std::string text = f->statement;
    if (!f->file.empty() && !text.empty()) return Fail("give the statements or -f FILE, not both");
    if (!f->file.empty()) {
      if (f->file == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), {});
      } else {
        auto read = ReadFile(f->file);
        if (!read.ok()) return Fail("-f: " + read.status().message());
        text = *read;
      }
    }
    if (text.empty()) return Fail("no statement: give one as an argument or with -f FILE");
    auto statements = sqlflow::ParseStatements(text);
    const std::string source = f->file.empty() ? "statement" : f->file;
    if (!statements.ok()) return Fail(source + ": " + statements.status().message());
    sqlflow::ExecutorOptions o;
    o.database = f->database;
    o.model_dir = f->model_dir;
    o.overwrite = f->overwrite;
    o.job_flags = app->remaining();
    o.edl_binary = SelfBinary();
    if (o.edl_binary.empty()) return Fail(kNoSelfBinary);
    for (size_t i = 0; i < o.job_flags.size(); ++i) {
      const std::string& flag = o.job_flags[i];
      o.kube |= flag == "--cluster=kube" ||
                (flag == "--cluster" && i + 1 < o.job_flags.size() && o.job_flags[i + 1] == "kube");
      if (flag.rfind("--training_data", 0) == 0 || flag.rfind("--validation_data", 0) == 0 ||
          flag.rfind("--prediction_data", 0) == 0 || flag.rfind("--output", 0) == 0 ||
          flag.rfind("--model_def", 0) == 0) {
        return Fail(flag + ": the statement says what to read and write; edl sql sets it");
      }
    }
    if (o.kube && !o.model_dir.empty()) {
      return Fail(
          "--model_dir with --cluster=kube: the job's pods load stored models from the "
          "database, so edl sql keeps them there on Kubernetes (drop --model_dir)");
    }
    for (const sqlflow::Statement& s : *statements) {
      Status st = sqlflow::ExecuteStatement(s, o);
      if (!st.ok()) return Fail(source + ": " + st.message());
    }
    return 0;
  };
}

}  // namespace edl::cmd
