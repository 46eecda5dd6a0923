// For tests of one PS worker in one process: the Fashion-MNIST MLP zoo
// model compiled for a worker or a PS, and a master of one epoch of
// `records` training records in tasks of 4 minibatches of 32.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "roles/local/compiled_model.h"
#include "roles/master/master_core.h"

namespace edl::roles::worker::testing {

inline const std::string kTrain = std::string(EDL_FASHION_MNIST) + "/train-images-idx3-ubyte.gz";

inline CompiledModel Mlp(bool for_ps) {
  ModelOptions mo;
  mo.model_def = "zoo:fashion_mnist_mlp";
  mo.num_threads = 1;
  mo.for_inference = for_ps;
  auto cm = CompileModel(mo);
  EDL_CHECK(cm.ok()) << cm.status().message();
  return std::move(*cm);
}

inline std::unique_ptr<master::MasterCore> OneEpochMaster(const std::string& name, int64_t records,
                                                          bool shuffle) {
  master::MasterOptions o;
  o.job_name = name;
  o.records.training = records;
  o.minibatch_size = 32;
  o.num_minibatches_per_task = 4;
  o.num_epochs = 1;
  o.shuffle = shuffle;
  auto core = master::MasterCore::Create(o, SystemClock());
  EDL_CHECK(core.ok()) << core.status().message();
  return std::move(*core);
}

}  // namespace edl::roles::worker::testing
