// The files a data flag (--training_data, --validation_data,
// --prediction_data) names: a file, a directory (its data files in name
// order), a glob ("/data/part-*.csv.gz"), or a comma-separated list of
// these, in the order given. In a directory, names starting with '.' or '_'
// (index caches, Hadoop's _SUCCESS) and IDX labels files (found beside
// their images file) are not data files.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace edl::data {

// What a data file's name says it holds, a trailing ".gz" aside: *.csv and
// *.txt are kCsv, *.tsv kTsv, *.tfrecord, *.tfrecords and *.tfr kTfRecord,
// *-ubyte and *.idx kIdx. The one place edl reads formats from names.
enum class FileKind { kUnknown, kCsv, kTsv, kTfRecord, kIdx };
FileKind FileKindFromName(const std::string& path);

// Errors name the part of `value` at fault: a path that does not exist, a
// glob that matches nothing, a directory with no data files or whose files
// are of more than one format (CSV, TFRecord, IDX by their names), an empty
// part, a file named twice (its records would be counted twice).
Result<std::vector<std::string>> ResolveDataPaths(const std::string& value);

}  // namespace edl::data
