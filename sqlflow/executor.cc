#include "sqlflow/executor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/file.h"
#include "base/logging.h"
#include "data/sql_source.h"
#include "nn/keras/zoo.h"
#include "sqlflow/canned_models.h"
#include "sqlflow/feature_spec.h"
#include "sqlflow/model_store.h"
#include "sqlflow/result_table.h"
#include "sqlflow/select_plan.h"
#include "sqlflow/stored_model.h"

namespace edl::sqlflow {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The file inside a stored model that holds the spec it was trained with.
constexpr char kSpecFile[] = "edl_spec.json";

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// A temporary directory removed at scope exit.
class WorkDir {
 public:
  WorkDir() {
    char pattern[] = "/tmp/edl-sql-XXXXXX";
    if (::mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~WorkDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs the edl binary with `args`; its stdout passes through (and is kept
// in *out when given), its stderr goes to ours.
Status RunJob(const ExecutorOptions& o, const std::vector<std::string>& args,
              std::string* out = nullptr) {
  std::string command = ShellQuote(o.edl_binary);
  for (const std::string& a : args) command += " " + ShellQuote(a);
  // Each job of one edl sql run has a name of its own: --job_name=X names
  // the first, X-2, X-3, ... the next (a job's objects outlive it on
  // Kubernetes, and its directory in --jobs_dir).
  static int jobs = 0;
  const std::string suffix = ++jobs > 1 ? "-" + std::to_string(jobs) : "";
  for (size_t i = 0; i < o.job_flags.size(); ++i) {
    const std::string& a = o.job_flags[i];
    const bool name =
        a.rfind("--job_name=", 0) == 0 || (i > 0 && o.job_flags[i - 1] == "--job_name");
    command += " " + ShellQuote(name ? a + suffix : a);
  }
  EDL_LOG(INFO) << "running: edl " << args.front() << " ...";
  EDL_LOG(DEBUG) << command;
  std::fflush(stdout);
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return IoError("cannot run " + o.edl_binary);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    std::fwrite(buf, 1, n, stdout);
    std::fflush(stdout);
    if (out) out->append(buf, n);
  }
  const int status = ::pclose(p);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code != 0) {
    return Aborted("edl " + args.front() + " failed (exit code " + std::to_string(code) + ")");
  }
  return Status::Ok();
}

// The job flags of train.*, validation.* and (non-canned models) model.*
// attributes; errors name an unknown one.
Status JobFlags(const Statement& s, bool canned, const std::string& database,
                data::SqlConnection& db, std::vector<std::string>* args) {
  for (const Attribute& a : s.with) {
    const json v = json::parse(a.json, nullptr, false);
    auto integer = [&](const std::string& flag) -> Status {
      if (!v.is_number_integer() || v.get<int64_t>() < 1) {
        return InvalidArgument(a.where + ": " + a.name + " must be a positive integer, got " +
                               a.json);
      }
      args->push_back("--" + flag + "=" + std::to_string(v.get<int64_t>()));
      return Status::Ok();
    };
    if (a.name == "train.epoch") {
      EDL_RETURN_IF_ERROR(integer("num_epochs"));
    } else if (a.name == "train.batch_size") {
      EDL_RETURN_IF_ERROR(integer("minibatch_size"));
    } else if (a.name == "validation.metrics") {
      if (!v.is_string()) {
        return InvalidArgument(a.where +
                               ": validation.metrics must be a string like "
                               "\"Accuracy,AUC\", got " +
                               a.json);
      }
      std::string m = v.get<std::string>();
      for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      args->push_back("--metrics=" + m);
    } else if (a.name == "validation.select") {
      if (!v.is_string()) {
        return InvalidArgument(a.where + ": validation.select must be a \"SELECT ...\" string");
      }
      auto parsed = ParseStatements(v.get<std::string>() + "\nINTO edl_validation");
      if (!parsed.ok()) return parsed.status().WithPrefix(a.where + ": validation.select");
      EDL_ASSIGN_OR_RETURN(SelectPlan vp, PlanSelect(parsed->front(), database, db));
      args->push_back("--validation_data=" + vp.data_url);
    } else if (a.name.rfind("model.", 0) == 0 && canned) {
      continue;  // the canned model's own
    } else if (a.name == "model.learning_rate" && v.is_number()) {
      args->push_back("--learning_rate=" + a.json);
    } else if (a.name == "model.optimizer" && v.is_string()) {
      args->push_back("--optimizer=" + v.get<std::string>());
    } else {
      return InvalidArgument(a.where + ": unknown attribute " + a.name +
                             " (train.epoch, train.batch_size, validation.select, "
                             "validation.metrics, and model.* for the model)");
    }
  }
  return Status::Ok();
}

// The model spec JSON a TO TRAIN statement trains.
Result<std::string> TrainSpec(const Statement& s, const SelectPlan& plan, data::SqlConnection& db,
                              bool* canned) {
  const std::string name = s.model.empty() ? "" : s.model;
  *canned = !s.model_is_file && (name.empty() || IsCannedModel(name));
  if (*canned) {
    EDL_ASSIGN_OR_RETURN(FeatureSpec f, BuildFeatureSpec(s, plan, db));
    const std::string model = name.empty() ? DefaultModel(f) : name;
    if (name.empty()) EDL_LOG(INFO) << "training a " << model << " (no TO TRAIN clause)";
    return CannedModelSpec(model, s.with, f);
  }
  std::string text;
  if (s.model_is_file) {
    auto file = ReadFile(s.model);
    if (!file.ok()) return file.status().WithPrefix("TO TRAIN '" + s.model + "'");
    text = *file;
  } else {
    auto zoo = nn::keras::ZooSpecJson(name);
    if (!zoo.ok()) {
      return NotFound(s.where_at + ": TO TRAIN " + name +
                      ": not a canned model (DNNClassifier, DNNRegressor, LinearClassifier, "
                      "LinearRegressor, WideAndDeep, DeepFM) nor a zoo model (edl zoo list); "
                      "give a model spec file as a 'string'");
    }
    text = *zoo;
  }
  json spec = json::parse(text, nullptr, false);
  if (!spec.is_object() || !spec.contains("model")) {
    return InvalidArgument("TO TRAIN " + s.model +
                           ": not an edl model spec (a JSON object with \"model\")");
  }
  if (!s.columns.empty()) {
    EDL_ASSIGN_OR_RETURN(FeatureSpec f, BuildFeatureSpec(s, plan, db));
    spec["input"] = json::parse(f.input_json);
  } else if (!s.label.empty()) {
    if (!spec.contains("input")) spec["input"] = json::object();
    spec["input"]["label"] = s.label;
  }
  return spec.dump();
}

Status Train(const Statement& s, const ExecutorOptions& o, data::SqlConnection& db,
             ModelStore& store) {
  EDL_RETURN_IF_ERROR(CheckModelName(s.into).WithPrefix(s.where_at + ": INTO"));
  EDL_ASSIGN_OR_RETURN(bool exists, store.Exists(s.into));
  if (exists && !o.overwrite) {
    return AlreadyExists(s.where_at + ": INTO " + s.into + ": model \"" + s.into +
                         "\" already exists in " + store.where() +
                         " (give --overwrite to replace it)");
  }
  EDL_ASSIGN_OR_RETURN(SelectPlan plan, PlanSelect(s, o.database, db));
  bool canned = false;
  EDL_ASSIGN_OR_RETURN(std::string spec, TrainSpec(s, plan, db, &canned));
  WorkDir work;
  if (work.path().empty()) return IoError("cannot create a directory in /tmp");
  EDL_RETURN_IF_ERROR(WriteFileAtomically(work.path() + "/spec.json", spec));
  std::vector<std::string> args = {"train", "--model_def=" + work.path() + "/spec.json",
                                   "--training_data=" + plan.data_url,
                                   "--output=" + work.path() + "/model"};
  EDL_RETURN_IF_ERROR(JobFlags(s, canned, o.database, db, &args));
  EDL_RETURN_IF_ERROR(RunJob(o, args));
  EDL_RETURN_IF_ERROR(WriteFileAtomically(work.path() + "/model/" + kSpecFile, spec));
  EDL_RETURN_IF_ERROR(store.Save(s.into, work.path() + "/model", s.text, o.overwrite));
  std::printf("model %s saved in %s\n", s.into.c_str(), store.where().c_str());
  return Status::Ok();
}

// Where a job finds stored model `name` (loaded into `dir` here): `dir`,
// or on Kubernetes the model in the database, which the pods load.
std::string ModelForJob(const ExecutorOptions& o, const std::string& name, const std::string& dir) {
  return o.kube ? StoredModelUrl(o.database, name) : dir;
}

// The spec a stored model was trained with.
Result<json> StoredSpec(const std::string& dir, const std::string& name) {
  EDL_ASSIGN_OR_RETURN(std::string text, ReadFile(dir + "/" + kSpecFile));
  json spec = json::parse(text, nullptr, false);
  if (!spec.is_object())
    return IoError("model \"" + name + "\": its " + kSpecFile + " is not JSON");
  return spec;
}

// A result table that exists is refused before its job runs, unless
// `overwrite` (WriteResultTable checks again when it writes).
Status RefuseExisting(data::SqlConnection& db, const std::string& table, bool overwrite,
                      const std::string& where) {
  if (overwrite) return Status::Ok();
  auto key = db.PrimaryKey(table);  // NotFound: no such table
  if (!key.ok() && key.status().code() == StatusCode::kNotFound) return Status::Ok();
  if (!key.ok()) return key.status();
  return AlreadyExists(where + ": table \"" + table +
                       "\" already exists (give --overwrite to replace it)");
}

// Splits one CSV line of edl predict's output (numbers and names only).
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string f;
  while (std::getline(in, f, ',')) out.push_back(f);
  return out;
}

Status Predict(const Statement& s, const ExecutorOptions& o, data::SqlConnection& db,
               ModelStore& store) {
  WorkDir work;
  if (work.path().empty()) return IoError("cannot create a directory in /tmp");
  const std::string dir = work.path() + "/model";
  EDL_RETURN_IF_ERROR(store.Load(s.using_model, dir).WithPrefix(s.where_at + ": USING"));
  EDL_ASSIGN_OR_RETURN(json spec, StoredSpec(dir, s.using_model));
  EDL_RETURN_IF_ERROR(
      RefuseExisting(db, s.predict_table, o.overwrite, s.where_at + ": TO PREDICT"));
  EDL_ASSIGN_OR_RETURN(SelectPlan plan, PlanSelect(s, o.database, db));
  const std::string csv = work.path() + "/predictions.csv";
  std::vector<std::string> args = {
      "predict", "--checkpoint_dir_for_init=" + ModelForJob(o, s.using_model, dir),
      "--prediction_data=" + plan.data_url, "--output=" + csv};
  if (o.kube) {
    // The client checks the job against the model's spec before the pods
    // load its weights from the database.
    EDL_RETURN_IF_ERROR(WriteFileAtomically(work.path() + "/spec.json", spec.dump()));
    args.push_back("--model_def=" + work.path() + "/spec.json");
  }
  EDL_RETURN_IF_ERROR(RunJob(o, args));
  // Keys in the order of the predictions (the job's records are the rows
  // in key order).
  // (On a connection of their own: the table is written on `db` meanwhile.)
  const std::string key = data::SqlConnection::QuoteIdentifier(plan.key);
  EDL_ASSIGN_OR_RETURN(data::SqlUrl url, DatabaseUrl(o.database));
  EDL_ASSIGN_OR_RETURN(auto keys_db, data::ConnectSql(url));
  EDL_ASSIGN_OR_RETURN(
      auto keys, keys_db->Query("SELECT " + key + " FROM " + plan.relation + " ORDER BY " + key));
  std::ifstream in(csv);
  std::string header;
  if (!std::getline(in, header)) return IoError(csv + ": edl predict wrote no header");
  const std::vector<std::string> names = SplitCsv(header);
  size_t column = 0;
  std::string type = "DOUBLE PRECISION";
  std::vector<std::string> vocabulary;
  if (auto it = std::find(names.begin(), names.end(), "class"); it != names.end()) {
    column = static_cast<size_t>(it - names.begin());
    type = "BIGINT";
    const json& input = spec.value("input", json::object());
    if (input.contains("label_vocabulary")) {
      vocabulary = input["label_vocabulary"].get<std::vector<std::string>>();
      type = "TEXT";
    }
  }
  int64_t n = 0;
  NextRow next = [&](std::vector<std::string>* row) -> Result<bool> {
    std::string line;
    const bool have_line = static_cast<bool>(std::getline(in, line));
    EDL_ASSIGN_OR_RETURN(bool have_key, keys->Next());
    if (have_line != have_key) {
      return FailedPrecondition("table \"" + s.table +
                                "\" changed while predicting: " + std::to_string(n) +
                                " predictions and " + (have_key ? "more" : "fewer") + " rows");
    }
    if (!have_line) return false;
    const std::vector<std::string> f = SplitCsv(line);
    if (column >= f.size()) return IoError(csv + ": row " + std::to_string(n + 1) + " is short");
    std::string value = f[column];
    if (!vocabulary.empty()) {
      const size_t id = std::stoul(value);
      value = id < vocabulary.size() ? vocabulary[id] : value;
    }
    *row = {std::string(keys->fields()[0]), value};
    ++n;
    return true;
  };
  EDL_RETURN_IF_ERROR(WriteResultTable(
      db, s.predict_table, {{plan.key, "BIGINT"}, {s.predict_column, type}}, next, o.overwrite));
  std::printf("%lld predictions written to table %s\n", static_cast<long long>(n),
              s.predict_table.c_str());
  return Status::Ok();
}

// The last evaluation line of a job's output -> metrics: "evaluation:
// loss 0.31 accuracy 0.9 (1000 records in ...)" (one process) or
// "evaluation at version 12: loss 0.31 accuracy 0.9" (a distributed job's
// master).
std::vector<std::pair<std::string, std::string>> ParseEvaluation(const std::string& out) {
  std::vector<std::pair<std::string, std::string>> last;
  std::stringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t at = line.find("evaluation");
    if (at == std::string::npos) continue;
    const size_t colon = line.find(": ", at);
    if (colon == std::string::npos) continue;
    const std::string between = line.substr(at + 10, colon - at - 10);
    const bool versioned = between.rfind(" at version ", 0) == 0 && between.size() > 12 &&
                           between.find_first_not_of("0123456789", 12) == std::string::npos;
    if (!between.empty() && !versioned) continue;
    // Name-value pairs whose values are numbers ("... 3 tasks queued" is
    // not a result).
    std::vector<std::pair<std::string, std::string>> metrics;
    std::stringstream fields(line.substr(colon + 2));
    std::string name, value;
    bool numbers = true;
    while (fields >> name && name[0] != '(' && fields >> value) {
      char* end = nullptr;
      std::strtod(value.c_str(), &end);
      numbers &= end != value.c_str() && *end == '\0';
      metrics.emplace_back(name, value);
    }
    if (numbers && !metrics.empty()) last = std::move(metrics);
  }
  return last;
}

Status Evaluate(const Statement& s, const ExecutorOptions& o, data::SqlConnection& db,
                ModelStore& store) {
  WorkDir work;
  if (work.path().empty()) return IoError("cannot create a directory in /tmp");
  const std::string dir = work.path() + "/model";
  EDL_RETURN_IF_ERROR(store.Load(s.model, dir).WithPrefix(s.where_at + ": TO EVALUATE"));
  EDL_ASSIGN_OR_RETURN(json spec, StoredSpec(dir, s.model));
  if (!s.label.empty()) spec["input"]["label"] = s.label;
  EDL_RETURN_IF_ERROR(WriteFileAtomically(work.path() + "/spec.json", spec.dump()));
  EDL_RETURN_IF_ERROR(RefuseExisting(db, s.into, o.overwrite, s.where_at + ": INTO"));
  EDL_ASSIGN_OR_RETURN(SelectPlan plan, PlanSelect(s, o.database, db));
  std::vector<std::string> args = {"evaluate", "--model_def=" + work.path() + "/spec.json",
                                   "--checkpoint_dir_for_init=" + ModelForJob(o, s.model, dir),
                                   "--validation_data=" + plan.data_url};
  for (const Attribute& a : s.with) {
    if (a.name != "validation.metrics") {
      return InvalidArgument(a.where + ": unknown attribute " + a.name +
                             " (TO EVALUATE takes validation.metrics)");
    }
  }
  EDL_RETURN_IF_ERROR(JobFlags(s, false, o.database, db, &args));
  std::string out;
  EDL_RETURN_IF_ERROR(RunJob(o, args, &out));
  const auto metrics = ParseEvaluation(out);
  if (metrics.empty()) return IoError("edl evaluate printed no \"evaluation:\" line");
  size_t i = 0;
  NextRow next = [&](std::vector<std::string>* row) -> Result<bool> {
    if (i == metrics.size()) return false;
    *row = {metrics[i].first, metrics[i].second};
    ++i;
    return true;
  };
  EDL_RETURN_IF_ERROR(WriteResultTable(
      db, s.into, {{"metric", "TEXT"}, {"value", "DOUBLE PRECISION"}}, next, o.overwrite));
  std::printf("%zu metrics written to table %s\n", metrics.size(), s.into.c_str());
  return Status::Ok();
}

}  // namespace

Status ExecuteStatement(const Statement& s, const ExecutorOptions& o) {
  EDL_ASSIGN_OR_RETURN(data::SqlUrl url, DatabaseUrl(o.database));
  EDL_ASSIGN_OR_RETURN(auto db, data::ConnectSql(url));
  EDL_ASSIGN_OR_RETURN(auto store, ModelStore::Open(url, db.get(), o.model_dir));
  switch (s.kind) {
    case Statement::Kind::kTrain: return Train(s, o, *db, *store);
    case Statement::Kind::kPredict: return Predict(s, o, *db, *store);
    case Statement::Kind::kEvaluate: return Evaluate(s, o, *db, *store);
  }
  return Internal("unknown statement kind");
}

}  // namespace edl::sqlflow
