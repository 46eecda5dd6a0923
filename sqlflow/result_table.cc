#include "sqlflow/result_table.h"

#include <cmath>
#include <cstdlib>

namespace edl::sqlflow {
namespace {

using data::SqlConnection;

constexpr int kRowsPerInsert = 500;

bool IsNumber(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

Status Fill(SqlConnection& db, const std::string& table, const std::vector<ResultColumn>& columns,
            const NextRow& next, bool exists, bool overwrite) {
  const std::string quoted = SqlConnection::QuoteTable(table);
  if (exists && !overwrite) {
    return AlreadyExists("table \"" + table + "\" already exists (give --overwrite to replace it)");
  }
  if (exists) EDL_RETURN_IF_ERROR(db.Execute("DROP TABLE " + quoted));
  std::string create = "CREATE TABLE " + quoted + " (";
  for (size_t i = 0; i < columns.size(); ++i) {
    create +=
        (i ? ", " : "") + SqlConnection::QuoteIdentifier(columns[i].name) + " " + columns[i].type;
  }
  EDL_RETURN_IF_ERROR(db.Execute(create + ")"));
  std::vector<std::string> row;
  std::string insert;
  int64_t in_batch = 0, written = 0;
  for (;;) {
    EDL_ASSIGN_OR_RETURN(bool more, next(&row));
    if (more) {
      if (row.size() != columns.size()) {
        return Internal("a result row has " + std::to_string(row.size()) + " values for " +
                        std::to_string(columns.size()) + " columns");
      }
      insert += in_batch == 0 ? "INSERT INTO " + quoted + " VALUES (" : ", (";
      for (size_t i = 0; i < row.size(); ++i) {
        const bool text = columns[i].type == "TEXT";
        if (!text && !IsNumber(row[i])) {
          return InvalidArgument("table \"" + table + "\": row " + std::to_string(written + 1) +
                                 ": column '" + columns[i].name + "' gets '" + row[i] +
                                 "', not a number");
        }
        insert += (i ? ", " : "") + (text ? SqlConnection::QuoteLiteral(row[i]) : row[i]);
      }
      insert += ")";
      ++in_batch;
      ++written;
    }
    if ((!more || in_batch == kRowsPerInsert) && in_batch > 0) {
      EDL_RETURN_IF_ERROR(db.Execute(insert));
      insert.clear();
      in_batch = 0;
    }
    if (!more) return Status::Ok();
  }
}

}  // namespace

Status WriteResultTable(SqlConnection& db, const std::string& table,
                        const std::vector<ResultColumn>& columns, const NextRow& next,
                        bool overwrite) {
  EDL_RETURN_IF_ERROR(db.Execute("BEGIN"));
  auto key = db.PrimaryKey(table);  // NotFound: no such table
  if (!key.ok() && key.status().code() != StatusCode::kNotFound) {
    (void)db.Execute("ROLLBACK");
    return key.status();
  }
  Status s = Fill(db, table, columns, next, key.ok(), overwrite);
  if (!s.ok()) {
    (void)db.Execute("ROLLBACK");
    return s;
  }
  return db.Execute("COMMIT");
}

}  // namespace edl::sqlflow
