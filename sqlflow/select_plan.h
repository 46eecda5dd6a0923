// SelectPlan: what a statement's SELECT reads, resolved against the
// database: the table's key (its primary key, or SQLite's rowid), the
// columns and their types, the SQL that yields the rows (for the
// statistics of the COLUMN clause) and the data URL a job reads them
// through (data/sql_url.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/sql_connection.h"
#include "data/sql_url.h"
#include "sqlflow/statement.h"

namespace edl::sqlflow {

struct SelectPlan {
  std::string key;                       // the key column
  std::vector<data::SqlColumn> columns;  // what the SELECT returns, the key among them
  std::string relation;                  // "(SELECT ...) AS edl_s", for FROM
  std::string data_url;                  // sqlite:...?query=...&key=...
};

// The SELECT of `s` (its list, table, WHERE and LIMIT) on `database` (a
// database URL without table or query: sqlite:PATH or
// postgresql://USER@HOST/DB[?sslmode=...]). Errors name the table: missing,
// without a primary key, a SELECT the database refuses.
Result<SelectPlan> PlanSelect(const Statement& s, const std::string& database,
                              data::SqlConnection& db);

// The database URL of `database` as data::SqlUrl (no table yet), for
// connecting; InvalidArgument naming --database when malformed.
Result<data::SqlUrl> DatabaseUrl(const std::string& database);

}  // namespace edl::sqlflow
