// PgBinaryCopyParser: reads PostgreSQL's binary COPY format (COPY ... TO
// STDOUT (FORMAT binary)) row by row: an 11-byte signature, flags and a
// header extension; per row a 16-bit field count and per field a 32-bit
// length (-1: NULL) and the value in its type's binary form (big-endian
// integers, IEEE floats, text as its bytes); a count of -1 at the end.
// Binary rows carry no types, so the parser is told the query's.
#pragma once

#include <array>
#include <vector>

#include "base/status.h"
#include "data/sql_connection.h"

namespace edl::data {

class PgBinaryCopyParser {
 public:
  // `types[i]`: the i-th column's, as SqlConnection::QueryTyped takes them
  // (kReal: float8 or float4; kInteger: int8, int4 or int2; kBool; kText
  // and others: the bytes as text).
  explicit PgBinaryCopyParser(std::vector<SqlType> types);

  // Reads from [*at, end) the header if not yet read and then one row into
  // `out` (fields are views into the data, integers' text into the
  // parser's own buffers): true. False when the data held no row (the
  // header alone, or the trailer, after which *at == end). Malformed data
  // (a wrong signature, a count or length past the data, a number of the
  // wrong size, a row of another width) is an InvalidArgument saying what.
  Result<bool> Parse(const char** at, const char* end, SqlCells* out);

 private:
  Status Field(size_t i, const char* p, size_t n, SqlCells* out);

  std::vector<SqlType> types_;
  std::vector<std::array<char, 24>> integers_;  // integer fields as text
  bool header_read_ = false;
};

}  // namespace edl::data
