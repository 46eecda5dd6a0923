#include "cmd/model_flags.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/logging.h"

namespace edl::cmd {

void AddModelFlags(CLI::App& app, roles::ModelOptions& o) {
  app.add_option("--model_def", o.model_def,
                 "The model: a model spec JSON file (docs/model-spec.md), a Keras "
                 "model.to_json() file, a TF.js model.json (with its weights), or "
                 "zoo:NAME for a built-in model (edl zoo list)");
  app.add_option("--loss", o.loss,
                 "Loss name or Keras JSON, e.g. sparse_categorical_crossentropy or "
                 "'{\"class_name\": \"SparseCategoricalCrossentropy\", \"config\": "
                 "{\"from_logits\": true}}'; overrides the spec's");
  app.add_option("--optimizer", o.optimizer,
                 "Optimizer name or Keras JSON, e.g. adam or '{\"class_name\": \"SGD\", "
                 "\"config\": {\"learning_rate\": 0.1, \"momentum\": 0.9}}'; overrides "
                 "the spec's (default Adam)");
  app.add_option("--metrics", o.metrics,
                 "Comma-separated metric names (accuracy,auc,precision,recall,mse,mae) "
                 "or a Keras JSON list; overrides the spec's");
  app.add_option("--learning_rate", o.learning_rate,
                 "Overrides the optimizer's learning rate when > 0")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint_dir_for_init", o.checkpoint_dir_for_init,
                 "Start from this checkpoint: a version-N directory, a checkpoint "
                 "root (its newest version is used), an --output export directory, or a model "
                 "edl sql stored in a database: DATABASE?model=NAME (docs/sql.md)");
  app.add_option("--seed", o.seed,
                 "Seed for weight initialization, shuffling and dropout; equal seeds "
                 "and thread counts give identical runs")
      ->capture_default_str();
  app.add_option("--num_threads", o.num_threads,
                 "CPU threads for the tensor engine (0 = all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--adapt_threads", o.adapt_threads,
                 "Training on the CPU: start with the CPUs that other running processes "
                 "leave free; when this process waits for its cores (other busy "
                 "processes, a cgroup CPU quota), try half the threads for a few steps and "
                 "keep the faster team size (growing back when the cores free up). An idle "
                 "machine never changes it; false keeps --num_threads throughout (runs with "
                 "one seed are then reproducible on a busy machine too)")
      ->capture_default_str();
  app.add_option("--device", o.device,
                 "Where parameters and activations live: cpu, cuda (the GPU through "
                 "libedl_cuda.so; fails saying why when there is none) or auto (cuda "
                 "when usable, else cpu). The parameter server always uses the CPU")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  app.add_option("--input_spec", o.input_spec,
                 "JSON of the model spec's \"input\" section, replacing the spec's: how records "
                 "become model inputs (docs/data.md), e.g. '{\"image\": {\"size\": [28, 28], "
                 "\"channels\": 1}}' to feed zoo:fashion_mnist_cnn from image folders "
                 "(docs/images.md)");
  app.add_option("--data_index_dir", o.data_index_dir,
                 "Where record indexes of CSV and TFRecord data are cached when the "
                 "data's own directory is read-only (docs/data.md); distributed jobs "
                 "stream their data through these indexes");
  app.add_flag("--skip_corrupt_records", o.skip_corrupt_records,
               "Leave out records that are corrupt on their own (a TFRecord data "
               "checksum mismatch, a record the input spec cannot decode) instead of "
               "failing the task: each is logged (the first 20 per file) and counted "
               "in the job's report. Applies to TFRecord files and to data streamed "
               "by distributed jobs");
  app.add_flag("--data_in_memory", o.data_in_memory,
               "Distributed jobs: every worker loads its data sets whole when it starts "
               "(decoded once, reused every epoch; memory grows with the data set: image "
               "files take height x width x channels x 4 bytes each) instead of streaming "
               "each task's records from disk");
}

void AddCommonFlags(CLI::App& app, CommonFlags& f) {
  app.add_option("--log_level", f.log_level, "DEBUG, INFO, WARNING or ERROR")
      ->capture_default_str();
}

bool ApplyCommonFlags(const CommonFlags& f) {
  LogLevel level;
  if (!ParseLogLevel(f.log_level, &level)) {
    std::fprintf(stderr, "edl: --log_level: expected DEBUG, INFO, WARNING or ERROR, got \"%s\"\n",
                 f.log_level.c_str());
    return false;
  }
  SetLogLevel(level);
  return true;
}

}  // namespace edl::cmd
