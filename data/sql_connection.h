// SqlConnection: one connection to a database (PostgreSQL through libpq,
// SQLite through libsqlite3; both loaded when first used, so edl runs
// without them until a data flag names a database). Rows come streamed,
// one at a time, as text fields (what CSV rows are), so a table's columns
// become model inputs exactly as a CSV file's do. Not thread-safe: one
// thread uses a connection at a time, and one SqlRows at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "data/sql_url.h"

namespace edl::data {

// A column's type as the database's schema gives it.
enum class SqlType { kInteger, kReal, kBool, kText, kOther };

struct SqlColumn {
  std::string name;
  SqlType type = SqlType::kOther;
  std::string type_name;  // the database's own ("bigint", "REAL", ...)
};

// One row's fields. Rows of SqlConnection::QueryTyped also say which
// fields came as numbers (is_number[i], the value in numbers[i]).
struct SqlCells {
  std::vector<std::string_view> fields;
  std::vector<char> nulls;
  std::vector<char> is_number;  // empty for text rows
  std::vector<double> numbers;
};

// The rows of one query, read in order. Fields are valid until the next
// Next(); a NULL field is empty with null(i) true.
class SqlRows {
 public:
  virtual ~SqlRows() = default;
  // Advances to the next row; false after the last. Errors name the
  // database and what failed (a lost connection is Unavailable).
  virtual Result<bool> Next() = 0;
  const std::vector<std::string_view>& fields() const { return cells_.fields; }
  bool null(size_t i) const { return cells_.nulls[i] != 0; }
  // Typed rows: a field that came as a number has its value here (and its
  // text is empty when it was a kReal).
  const SqlCells& cells() const { return cells_; }

 protected:
  SqlCells cells_;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  // An identifier quoted for this database ("a""b"): never pasted bare.
  static std::string QuoteIdentifier(std::string_view name);
  // A table name quoted: "schema"."table" when it holds one dot.
  static std::string QuoteTable(std::string_view table);
  // A string literal quoted for this database ('it''s').
  static std::string QuoteLiteral(std::string_view text);

  // The columns (names and schema types) `select` returns, without running
  // it over the rows.
  virtual Result<std::vector<SqlColumn>> Describe(const std::string& select) = 0;
  // The primary key columns of `table` in order (empty: none; SQLite's
  // implicit rowid is "rowid"). NotFound when the table does not exist.
  virtual Result<std::vector<std::string>> PrimaryKey(const std::string& table) = 0;
  // Runs `select` and streams its rows. The connection serves nothing else
  // until the rows are read to the end or destroyed.
  virtual Result<std::unique_ptr<SqlRows>> Query(const std::string& select) = 0;
  // Runs `select`, whose i-th column is of `types[i]`, and streams its rows
  // with numbers as numbers: kReal fields (double precision on
  // PostgreSQL) as numbers only, kInteger as numbers and text, kBool as 0/1
  // and "t"/"f", kText as text. PostgreSQL reads them in binary COPY format
  // (the SELECT must yield exactly those types: the caller casts); SQLite
  // gives kReal fields holding a number as numbers and the rest as text.
  virtual Result<std::unique_ptr<SqlRows>> QueryTyped(const std::string& select,
                                                      const std::vector<SqlType>& types) = 0;
  // The first row of `select` (NULLs as nullopt; empty when it returns no
  // rows), the rest read and dropped.
  Result<std::vector<std::optional<std::string>>> QueryRow(const std::string& select);
  // Runs statements that return no rows (DDL, INSERT, BEGIN/COMMIT).
  virtual Status Execute(const std::string& sql) = 0;
  // Whether the connection was lost (a new one is needed).
  virtual bool broken() const = 0;
  // PostgreSQL: the current transaction id (rows changed after it have a
  // newer xmin); SQLite: nullopt.
  virtual Result<std::optional<int64_t>> CurrentXid() = 0;
};

// A database's integer in decimal text; nullopt for anything else (a
// fraction, text, a value past int64).
std::optional<int64_t> ParseSqlInteger(std::string_view text);

// Connects to the database `url` names. Errors name it: the library is
// missing, the server cannot be reached (Unavailable), authentication
// failed (Unauthenticated), the file does not exist (NotFound).
Result<std::unique_ptr<SqlConnection>> ConnectSql(const SqlUrl& url);

// The libraries' own: in pg_connection.cc and sqlite_connection.cc.
Result<std::unique_ptr<SqlConnection>> ConnectPostgres(const SqlUrl& url);
Result<std::unique_ptr<SqlConnection>> ConnectSqlite(const SqlUrl& url);

}  // namespace edl::data
