// Opening a model's data: a data source opened with the model's input spec
// and checked to fit the model (inputs, per-record shapes, dtypes, id
// ranges, labels), for local training, the master and the workers alike.
// Plain functions; errors name the flag the data came from.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "data/source.h"

namespace edl::roles {

struct CompiledModel;
struct ModelOptions;

// Checks that the source produces what the model takes (input count, per-
// record shapes, dtypes) and that labels exist when `need_labels`; errors
// name `flag` (e.g. "--validation_data").
Status CheckSourceFitsModel(const data::Source& source, const CompiledModel& cm,
                            const std::string& flag, bool need_labels);

// Opens `path` with the model's input spec and checks it fits the model
// (CheckSourceFitsModel); errors name `flag`. `reading`: streamed or
// loaded, where indexes go, corrupt records skipped (data/source.h); its
// `labels` is set from need_labels.
Result<std::unique_ptr<data::Source>> OpenSourceForModel(const std::string& flag,
                                                         const std::string& path,
                                                         const CompiledModel& cm, bool need_labels,
                                                         data::OpenOptions reading = {});
// How a distributed job's processes read data: streamed (a worker's loaded
// whole with --data_in_memory; the master's never), with the model flags'
// --data_index_dir and --skip_corrupt_records.
data::OpenOptions JobReading(const ModelOptions& model, bool worker);

}  // namespace edl::roles
