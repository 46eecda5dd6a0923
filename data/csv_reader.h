// CsvReader: splits CSV text into records of fields, following RFC 4180:
// fields may be quoted ("a, b"), a quote inside a quoted field is doubled
// (""), quoted fields may span lines; lines end in \n or \r\n. Blank lines
// are skipped. Errors name the file and the line where the record starts.
// Not thread-safe (one reader per thread); it borrows the text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace edl::data {

class CsvReader {
 public:
  // `file_name` is only used in error messages. REQUIRES: text outlives this.
  CsvReader(std::string_view text, char delimiter, std::string file_name);

  // Advances to the next record: true if there is one, false at the end of
  // the text, or InvalidArgument ("file.csv:7: unterminated quoted field").
  Result<bool> Next();

  // The current record's fields (unquoted), valid until the next Next().
  const std::vector<std::string>& fields() const { return fields_; }
  // 1-based line on which the current record starts.
  int64_t line() const { return record_line_; }
  // "file.csv:17" for the current record, to prefix messages with.
  std::string Where() const;

 private:
  std::string_view text_;
  char delimiter_;
  std::string file_name_;
  size_t pos_ = 0;
  int64_t line_ = 1;  // line of text_[pos_]
  int64_t record_line_ = 0;
  std::vector<std::string> fields_;
};

}  // namespace edl::data
