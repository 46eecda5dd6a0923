// CsvSource: a CSV file (raw or gzip) parsed whole at Open into normalized
// in-memory columns (a ColumnSource): a float32 [N, numeric] input, int64
// categorical ids (one [N] input per column, or one [N, k] input with
// per-column id offsets) and int64 or float32 labels. See InputSpec for how
// columns are chosen; data/streamed_source.h reads the same files record by
// record instead.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/column_source.h"
#include "data/input_spec.h"

namespace edl::data {

class CsvSource {
 public:
  // Parses the whole file. Errors name the file, the line and the column:
  // "iris.csv:17: expected 5 fields, got 4", "x.csv:9: column 'age': cannot
  // parse 'abc' as a number", unknown columns in the spec, etc.
  static Result<std::unique_ptr<ColumnSource>> Open(const std::string& path, const CsvSpec& spec,
                                                    LabelPolicy labels);
};

// The column names of a CSV file given its first row after skip_rows
// (nullptr: no rows): the header (when spec.header), replaced by
// column_names when set, or "0", "1", ... `where` names that row in errors.
Result<std::vector<std::string>> CsvColumnNames(const std::string& path, const CsvSpec& spec,
                                                const std::vector<std::string>* first_row,
                                                const std::string& where);

}  // namespace edl::data
