// CsvRowDecoder: turns the fields of CSV rows into model inputs as the
// spec says (data/input_spec.h), resolved once against the file's column
// names: numeric columns normalized, categorical columns to ids, the label
// to a class or a value. Immutable after Create, so thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "data/categorical.h"
#include "data/column_buffer.h"
#include "data/input_spec.h"
#include "data/source.h"

namespace edl::data {

class CsvRowDecoder {
 public:
  // Errors name `path` and the column: unknown columns, a column used
  // twice, normalize naming a non-numeric column, only a label.
  static Result<std::unique_ptr<CsvRowDecoder>> Create(const std::string& path,
                                                       std::vector<std::string> columns,
                                                       const CsvSpec& spec, LabelPolicy labels);

  const ColumnLayout& layout() const { return layout_; }
  const std::vector<std::string>& columns() const { return columns_; }
  // The columns read as numbers (indices into columns()), as the spec
  // resolved them.
  const std::vector<int64_t>& numeric_columns() const { return numeric_columns_; }

  // Appends one row to `out`, or leaves it unchanged and says what is wrong
  // ("expected 5 fields, got 4", "column 'age': cannot parse 'x' as a
  // number"); callers prefix where the row is.
  Status Decode(const std::vector<std::string>& fields, ColumnBuffer* out) const;
  Status Decode(const std::vector<std::string_view>& fields, ColumnBuffer* out) const;

 private:
  CsvRowDecoder(const std::string& path, std::vector<std::string> columns, const CsvSpec& spec);
  Status Resolve(LabelPolicy labels);
  Result<int64_t> Find(const ColumnRef& c, const std::string& role) const;
  Status Claim(int64_t column, const std::string& role);
  Status DecodeInto(const std::vector<std::string_view>& fields, ColumnBuffer* out) const;
  Status CellError(const std::vector<std::string_view>& fields, int64_t column) const;
  Status Bad(const std::string& what) const { return InvalidArgument(path_ + ": " + what); }

  std::string path_;
  std::vector<std::string> columns_;
  CsvSpec spec_;
  ColumnLayout layout_;
  std::unordered_map<int64_t, std::string> claimed_;  // column -> its role
  int64_t label_column_ = -1;
  std::unordered_map<std::string, int64_t> label_vocabulary_;
  std::vector<int64_t> numeric_columns_;
  std::vector<Normalization> norms_;
  std::vector<int64_t> categorical_columns_;
  std::vector<CategoricalEncoder> encoders_;
  std::vector<int64_t> offsets_;
};

// Parses a whole field as a finite double (spaces and tabs around it and a
// leading '+' allowed).
bool ParseCsvDouble(std::string_view s, double* out);

}  // namespace edl::data
