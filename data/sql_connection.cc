#include "data/sql_connection.h"

namespace edl::data {

std::string SqlConnection::QuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string SqlConnection::QuoteTable(std::string_view table) {
  const size_t dot = table.find('.');
  if (dot == std::string_view::npos || table.find('.', dot + 1) != std::string_view::npos) {
    return QuoteIdentifier(table);
  }
  return QuoteIdentifier(table.substr(0, dot)) + "." + QuoteIdentifier(table.substr(dot + 1));
}

std::string SqlConnection::QuoteLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

Result<std::unique_ptr<SqlConnection>> ConnectSql(const SqlUrl& url) {
  return url.kind == SqlUrl::Kind::kPostgres ? ConnectPostgres(url) : ConnectSqlite(url);
}

}  // namespace edl::data
