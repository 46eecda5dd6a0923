#include "data/sql_connection.h"

#include <charconv>

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

Result<std::vector<std::optional<std::string>>> SqlConnection::QueryRow(const std::string& select) {
  EDL_ASSIGN_OR_RETURN(auto rows, Query(select));
  std::vector<std::optional<std::string>> out;
  EDL_ASSIGN_OR_RETURN(bool any, rows->Next());
  for (size_t i = 0; any && i < rows->fields().size(); ++i) {
    out.push_back(rows->null(i) ? std::nullopt
                                : std::optional<std::string>(std::string(rows->fields()[i])));
  }
  while (any) {
    EDL_ASSIGN_OR_RETURN(any, rows->Next());
  }
  return out;
}

std::optional<int64_t> ParseSqlInteger(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

Result<std::unique_ptr<SqlConnection>> ConnectSql(const SqlUrl& url) {
  return url.kind == SqlUrl::Kind::kPostgres ? ConnectPostgres(url) : ConnectSqlite(url);
}

}  // namespace edl::data
