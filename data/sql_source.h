// SqlSource: a database table or query (data/sql_url.h) read as a data set
// of records, like a streamed file. Records are the rows in the order of an
// ordered unique integer key (the table's primary key, SQLite's rowid, or
// key=COLUMN), record i being the row with the i-th smallest key.
//
// Opening plans the data set: the rows with key <= the largest key at that
// moment, and every kStride-th key, so that records [begin, end) are read
// with one query over a key range. A table's primary key with dense values
// (max - min + 1 = count, as serial keys) needs only min, max and count,
// which the database answers from its key index; other keys are found by
// a key-only scan (an index-only scan where the key is indexed). Neither
// reads the rows' payload. Reading streams
// the rows of that range (PostgreSQL: COPY TO STDOUT; SQLite: a prepared
// statement), decoding each through the spec exactly as a CSV row, with
// memory bounded by what one call returns.
//
// A fixed data set: the plan's bounds (rows, largest key, and on
// PostgreSQL a transaction id) travel to the job's other processes in
// reopen_name(). Every read checks that its key range still holds the rows
// it held when planned (rows inserted or deleted fail the read with
// FailedPrecondition naming the range) and, on PostgreSQL tables, that no
// row it returns was written after the plan (updates). Lost connections
// are retried with backoff for up to a minute, resuming after the rows
// already returned. Const and thread-safe: each read uses a connection of
// its own, from a small pool.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "data/csv_row_decoder.h"
#include "data/source.h"
#include "data/sql_connection.h"
#include "data/sql_url.h"

namespace edl::data {

class SqlSource : public Source {
 public:
  // One key kept per kStride records by the plan.
  static constexpr int64_t kStride = 64;

  // Errors name the URL and what is wrong: the database unreachable
  // (Unavailable) or refusing the user (Unauthenticated), a missing table
  // or column (NotFound / InvalidArgument), no usable key, a key that is
  // not an integer or not unique, a spec column of the wrong type, and on
  // a pinned URL rows that changed since the plan.
  static Result<std::unique_ptr<SqlSource>> Open(const std::string& value, const InputSpec& spec,
                                                 const OpenOptions& options);
  ~SqlSource() override;

  const std::string& name() const override { return url_.text; }
  int64_t num_records() const override { return num_records_; }
  bool has_labels() const override { return decoder_->layout().has_labels; }
  const std::vector<InputInfo>& inputs() const override { return decoder_->layout().inputs; }
  bool streamed() const override { return true; }
  std::string reopen_name() const override;

  Result<Examples> Read(int64_t begin, int64_t end) const override;
  // Reads [min, max] of `indices` and picks them (callers gather from one
  // task's range at a time).
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;
  Result<std::unique_ptr<RecordCursor>> OpenCursor(int64_t begin, int64_t end) const override;

  // Decodes records [begin, end) into `out`.
  Status DecodeRange(int64_t begin, int64_t end, ColumnBuffer* out) const;
  const ColumnLayout& layout() const { return decoder_->layout(); }

  // A connection from the pool (a new one when none is idle), and back.
  Result<std::unique_ptr<SqlConnection>> Acquire() const;
  void Release(std::unique_ptr<SqlConnection> connection) const;

  class Cursor;

 private:
  SqlSource() = default;
  Status Plan(SqlConnection& db);
  // On a pinned URL: FailedPrecondition unless the plan has its rows.
  Status CheckPinnedRows() const;
  // The condition on the key selecting the plan's points around
  // [begin, end), and how many rows it must hold.
  std::string KeyRange(int64_t begin, int64_t end, int64_t* expected) const;
  // The SELECT counting those rows (and, checking xmin, the age of the
  // plan's transaction id now).
  std::string CountQuery(int64_t begin, int64_t end, int64_t* expected) const;
  // The SELECT reading records [begin, end): the decoded columns, the key,
  // and with `age` whether the row's xmin is younger (written after the
  // plan).
  std::string RangeQuery(int64_t begin, int64_t end, std::optional<int64_t> age) const;
  // How RangeQuery reads column `c` (`number`: the decoder reads it as a
  // number): its expression and the type the rows bring.
  SqlType ReadAs(const SqlColumn& c, bool number, std::string* expr) const;

  SqlUrl url_;
  std::string from_;             // the relation: "\"t\"" or "(query) AS edl_q"
  std::string key_;              // the key, quoted
  std::string key_name_;         // the key, as named
  std::string columns_;          // the decoded columns' expressions, in decoder order
  std::vector<SqlType> types_;   // RangeQuery's fields: the columns, the key, the xmin check
  bool check_xmin_ = false;      // PostgreSQL table: rows written after xid_ fail
  bool key_is_primary_ = false;  // unique by the table's own constraint
  std::unique_ptr<CsvRowDecoder> decoder_;
  int64_t num_records_ = 0;
  int64_t max_key_ = 0;
  std::optional<int64_t> xid_;
  std::vector<int64_t> points_;  // points_[i]: the key of record i * kStride

  mutable std::mutex mu_;  // guards idle_
  mutable std::vector<std::unique_ptr<SqlConnection>> idle_;
};

}  // namespace edl::data
