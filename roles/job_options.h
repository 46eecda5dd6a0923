// Options of train / evaluate / predict, filled by cmd/ from flags (names as
// ElasticDL's, see docs/cli.md) and passed down; nothing below cmd/ reads
// flags or the environment.
#pragma once

#include <cstdint>
#include <string>

namespace edl::roles {

// What every job needs to turn a model definition into a runnable model.
struct ModelOptions {
  std::string model_def;  // path to JSON, TF.js model.json, or zoo:NAME
  // Override or supply what a bare Keras JSON lacks ("" = from the spec).
  std::string loss;                     // name or JSON
  std::string optimizer;                // name or JSON
  std::string metrics;                  // comma-separated names or a JSON array
  double learning_rate = 0;             // > 0 overrides the optimizer's
  std::string checkpoint_dir_for_init;  // start from this checkpoint
  uint64_t seed = 0;
  int num_threads = 0;  // 0 = all cores
  // Training on the CPU: a smaller team while fewer threads run faster
  // because the cores are shared (roles/thread_tuner.h).
  bool adapt_threads = true;
  // Where parameters and activations live: "cpu", "cuda" (fails when no GPU
  // can be used) or "auto" (cuda when usable, else cpu); roles/device_choice.h.
  // The parameter server and the master always compute on the CPU.
  std::string device = "cpu";
  // Where record indexes of CSV/TFRecord data are cached when the data's
  // directory is read-only ("" = beside the data only).
  std::string data_index_dir;
  // Streamed data (distributed jobs) and TFRecord files: a record that is
  // corrupt on its own is logged, counted and left out instead of failing
  // its task.
  bool skip_corrupt_records = false;
  // Distributed jobs: each worker loads its data sets whole when it starts
  // (decoded once, memory O(data set)) instead of streaming its tasks.
  bool data_in_memory = false;
  // Evaluate/predict: a spec without loss or optimizer is fine.
  bool for_inference = false;
  // JSON of the spec's "input" section, replacing the spec's ("" = the
  // spec's): e.g. a zoo model fed from image folders.
  std::string input_spec;
  // Image data whose class folders (or listing labels) name the classes
  // when the spec names none: the training data ("" = none).
  std::string class_data;
};

struct TrainOptions {
  ModelOptions model;
  std::string training_data;
  std::string validation_data;
  int num_epochs = 1;
  int64_t minibatch_size = 64;
  int64_t max_steps = 0;         // > 0 stops after this many steps
  int64_t evaluation_steps = 0;  // 0 = evaluate after every epoch
  int64_t checkpoint_steps = 0;  // 0 = only the final checkpoint (if dir set)
  std::string checkpoint_dir;
  int keep_checkpoint_max = 0;  // 0 = keep all
  std::string output;           // export directory for the final model
  bool shuffle = true;
  bool progress_bar = true;         // on a terminal; plain lines otherwise
  double log_interval_s = 10;       // plain progress line period
  std::string tensorboard_log_dir;  // "" = no TensorBoard event file
};

struct EvaluateOptions {
  ModelOptions model;
  std::string validation_data;
  int64_t minibatch_size = 256;
};

struct PredictOptions {
  ModelOptions model;
  std::string prediction_data;
  std::string output;  // CSV file
  int64_t minibatch_size = 256;
};

}  // namespace edl::roles
