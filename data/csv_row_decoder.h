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

// A row whose cells may have come as numbers already (a database's typed
// columns): cell c is numbers[c] when is_number[c], else text[c]; is_null[c]
// marks an empty (NULL) cell.
struct TypedRow {
  const std::string_view* text = nullptr;
  const double* numbers = nullptr;
  const char* is_number = nullptr;
  const char* is_null = nullptr;
  size_t size = 0;
};

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
  // The same for a typed row (numbers not parsed again; a NULL cell is an
  // empty field).
  Status Decode(const TypedRow& row, ColumnBuffer* out) const;
  // Whether column `c` is read as a number (a numeric column, or a label
  // that is a class id or a value).
  bool ReadsAsNumber(int64_t c) const;

 private:
  CsvRowDecoder(const std::string& path, std::vector<std::string> columns, const CsvSpec& spec);
  Status Resolve(LabelPolicy labels);
  Result<int64_t> Find(const ColumnRef& c, const std::string& role) const;
  Status Claim(int64_t column, const std::string& role);
  template <typename Cells>
  Status DecodeInto(const Cells& cells, ColumnBuffer* out) const;
  Status CellError(std::string_view text, int64_t column) const;
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
