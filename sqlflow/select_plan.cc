#include "sqlflow/select_plan.h"

#include <cctype>

#include "base/percent_encoding.h"

namespace edl::sqlflow {

using data::SqlConnection;

Result<data::SqlUrl> DatabaseUrl(const std::string& database) {
  if (!data::IsSqlUrl(database)) {
    return InvalidArgument("--database: expected sqlite:PATH or postgresql://USER@HOST/DB, got \"" +
                           database + "\"");
  }
  const std::string probe =
      database + (database.find('?') == std::string::npos ? "?" : "&") + "table=edl_probe";
  auto url = data::ParseSqlUrl(probe);
  if (!url.ok()) return url.status().WithPrefix("--database");
  if (url->table != "edl_probe" || !url->query.empty() || !url->key.empty()) {
    return InvalidArgument("--database \"" + database +
                           "\": name the database only; the statement names the table");
  }
  url->text = database;
  url->table.clear();
  return url;
}

Result<SelectPlan> PlanSelect(const Statement& s, const std::string& database, SqlConnection& db) {
  SelectPlan plan;
  EDL_ASSIGN_OR_RETURN(std::vector<std::string> pk, db.PrimaryKey(s.table));
  if (pk.size() != 1) {
    return FailedPrecondition(
        "table \"" + s.table + "\" has " +
        (pk.empty() ? std::string("no primary key") : "a primary key of several columns") +
        ": edl sql reads a table by an integer primary key (add one, e.g. id INTEGER PRIMARY "
        "KEY)");
  }
  plan.key = pk[0];
  const std::string key = plan.key == "rowid" ? "rowid" : SqlConnection::QuoteIdentifier(plan.key);
  // The SELECT list as written (the user's own SQL, run with their rights on
  // their database), with the key in front when the list lacks it.
  const std::string rest = " FROM " + SqlConnection::QuoteTable(s.table) +
                           (s.filter.empty() ? "" : " WHERE " + s.filter);
  std::string select = "SELECT " + s.select_list + rest;
  EDL_ASSIGN_OR_RETURN(plan.columns, db.Describe(select));
  bool has_key = false;
  for (const data::SqlColumn& c : plan.columns) has_key = has_key || c.name == plan.key;
  if (!has_key) {
    select = "SELECT " + key + ", " + s.select_list + rest;
    EDL_ASSIGN_OR_RETURN(plan.columns, db.Describe(select));
  }
  if (s.limit) select += " ORDER BY " + key + " LIMIT " + std::to_string(*s.limit);
  plan.relation = "(" + select + ") AS edl_s";
  plan.data_url = database + (database.find('?') == std::string::npos ? "?" : "&") +
                  "query=" + PercentEncode(select) + "&key=" + PercentEncode(plan.key);
  return plan;
}

}  // namespace edl::sqlflow
