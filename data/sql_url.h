// SqlUrl: a database table or query named by a data flag, in place of files:
//   sqlite:PATH?table=T[&key=K]            (a SQLite database file)
//   sqlite:PATH?query=SELECT...&key=K
//   postgresql://USER@HOST[:PORT]/DB?table=T[&key=K][&sslmode=require...]
//   postgresql://USER@HOST[:PORT]/DB?query=SELECT...&key=K
// (postgres:// too). Parameter values are percent-decoded (write '&' in a
// query as %26). PostgreSQL parameters other than edl's own (table, query,
// key and the plan's pins) go to libpq as they are (sslmode, sslrootcert,
// connect_timeout, application_name, ...). A password in the URL is
// refused: it would show in process lists and logs; libpq reads it from
// PGPASSWORD or ~/.pgpass (on Kubernetes, from the job's database Secret).
// Plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace edl::data {

struct SqlUrl {
  enum class Kind { kSqlite, kPostgres };
  Kind kind = Kind::kSqlite;
  std::string path;      // SQLite: the database file
  std::string conninfo;  // PostgreSQL: the URI libpq connects with
  std::string table;     // exactly one of table and query is set
  std::string query;
  std::string key;  // the ordered unique key column; "" = the primary key
  // The plan a master pins for its workers (SqlUrl::Pinned): the rows of
  // the data set and its largest key when the job started; PostgreSQL also
  // the transaction id rows changed after are detected by.
  std::optional<int64_t> rows;
  std::optional<int64_t> max_key;
  std::optional<int64_t> xid;
  std::string text;  // as given, less the pins: for messages

  // "table \"t\"" or "query": what errors name.
  std::string Relation() const;
  // This URL with the pins appended (what workers open).
  std::string Pinned(int64_t rows, int64_t max_key, std::optional<int64_t> xid) const;
};

// Whether `value` names a database rather than files (sqlite:, postgres:,
// postgresql:).
bool IsSqlUrl(const std::string& value);

// Errors are InvalidArgument naming `value` and what is wrong: no table or
// query (or both), an unknown edl parameter, a password, a malformed pin,
// bad percent-encoding.
Result<SqlUrl> ParseSqlUrl(const std::string& value);

}  // namespace edl::data
