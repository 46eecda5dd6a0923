#include "data/sql_url.h"

#include <cctype>
#include <charconv>
#include <vector>

namespace edl::data {
namespace {

const char kPinRows[] = "edl_rows";
const char kPinMaxKey[] = "edl_max_key";
const char kPinXid[] = "edl_xid";

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> PercentDecode(const std::string& s, const std::string& where) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 2 < s.size() ? HexValue(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? HexValue(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return InvalidArgument(where + ": '%' at offset " + std::to_string(i) +
                             " is not followed by two hex digits");
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Result<int64_t> ParsePin(const std::string& name, const std::string& value,
                         const std::string& where) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return InvalidArgument(where + ": " + name + "=\"" + value + "\" is not an integer");
  }
  return v;
}

}  // namespace

std::string SqlUrl::Relation() const {
  return table.empty() ? std::string("query") : "table \"" + table + "\"";
}

std::string SqlUrl::Pinned(int64_t n, int64_t max, std::optional<int64_t> x) const {
  std::string out = text;
  out += text.find('?') == std::string::npos ? "?" : "&";
  out += std::string(kPinRows) + "=" + std::to_string(n) + "&" + kPinMaxKey + "=" +
         std::to_string(max);
  if (x) out += std::string("&") + kPinXid + "=" + std::to_string(*x);
  return out;
}

bool IsSqlUrl(const std::string& value) {
  return StartsWith(value, "sqlite:") || StartsWith(value, "postgresql://") ||
         StartsWith(value, "postgres://");
}

Result<SqlUrl> ParseSqlUrl(const std::string& value) {
  SqlUrl url;
  const std::string where = "\"" + value + "\"";
  const size_t q = value.find('?');
  const std::string base = value.substr(0, q);
  const std::string params = q == std::string::npos ? "" : value.substr(q + 1);
  if (StartsWith(value, "sqlite:")) {
    url.kind = SqlUrl::Kind::kSqlite;
    url.path = base.substr(7);
    if (StartsWith(url.path, "//")) url.path = url.path.substr(2);  // sqlite:///abs
    if (url.path.empty()) {
      return InvalidArgument(where + ": no database file after \"sqlite:\"");
    }
  } else if (StartsWith(value, "postgresql://") || StartsWith(value, "postgres://")) {
    url.kind = SqlUrl::Kind::kPostgres;
    const size_t authority = base.find("://") + 3;
    const size_t at = base.find('@', authority);
    const size_t slash = base.find('/', authority);
    if (at != std::string::npos && (slash == std::string::npos || at < slash) &&
        base.substr(authority, at - authority).find(':') != std::string::npos) {
      const size_t colon = base.find(':', authority);
      return InvalidArgument(
          "\"" + base.substr(0, colon) + ":***" + value.substr(at) + "\"" +
          ": a password in the URL would show in process lists and logs; "
          "give it in PGPASSWORD or ~/.pgpass (on Kubernetes: --database_secret)");
    }
  } else {
    return InvalidArgument(where +
                           ": not a database URL (sqlite:PATH?table=T or "
                           "postgresql://USER@HOST/DB?table=T)");
  }
  std::vector<std::string> passed;  // PostgreSQL parameters for libpq
  std::vector<std::string> kept;    // the text less the pins
  for (size_t start = 0; q != std::string::npos && start <= params.size();) {
    size_t amp = params.find('&', start);
    if (amp == std::string::npos) amp = params.size();
    const std::string pair = params.substr(start, amp - start);
    start = amp + 1;
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string name = pair.substr(0, eq);
    EDL_ASSIGN_OR_RETURN(std::string v,
                         PercentDecode(eq == std::string::npos ? "" : pair.substr(eq + 1), where));
    if (name == kPinRows || name == kPinMaxKey || name == kPinXid) {
      EDL_ASSIGN_OR_RETURN(int64_t pin, ParsePin(name, v, where));
      (name == kPinRows ? url.rows : name == kPinMaxKey ? url.max_key : url.xid) = pin;
      continue;
    }
    kept.push_back(pair);
    if (name == "table") {
      url.table = v;
    } else if (name == "query") {
      url.query = v;
    } else if (name == "key") {
      url.key = v;
    } else if (name == "password") {
      return InvalidArgument(
          "\"" + base + "?password=***...\"" +
          ": a password in the URL would show in process lists and logs; "
          "give it in PGPASSWORD or ~/.pgpass (on Kubernetes: --database_secret)");
    } else if (url.kind == SqlUrl::Kind::kPostgres) {
      passed.push_back(pair);
    } else {
      return InvalidArgument(where + ": unknown parameter \"" + name +
                             "\" (a SQLite URL takes table, query and key)");
    }
  }
  if (url.table.empty() == url.query.empty()) {
    return InvalidArgument(where + (url.table.empty() ? ": name a table (?table=T) or a query "
                                                        "(?query=SELECT...)"
                                                      : ": give a table or a query, not both"));
  }
  if (!url.query.empty() && url.key.empty()) {
    return InvalidArgument(where +
                           ": a query needs key=COLUMN, an integer column of the query whose "
                           "values are unique (tasks are ranges of it)");
  }
  if (url.rows.has_value() != url.max_key.has_value()) {
    return InvalidArgument(where + ": " + kPinRows + " and " + kPinMaxKey + " come together");
  }
  if (url.kind == SqlUrl::Kind::kPostgres) {
    url.conninfo = base;
    for (size_t i = 0; i < passed.size(); ++i) url.conninfo += (i ? "&" : "?") + passed[i];
  }
  url.text = base;
  for (size_t i = 0; i < kept.size(); ++i) url.text += (i ? "&" : "?") + kept[i];
  return url;
}

}  // namespace edl::data
