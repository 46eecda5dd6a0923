// SqlConnection for SQLite through libsqlite3 (loaded at run time): rows
// stream through a prepared statement, one sqlite3_step at a time.
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <mutex>

#include "data/shared_library.h"
#include "data/sql_connection.h"

namespace edl::data {
namespace {

struct SqliteApi {
  decltype(&sqlite3_open_v2) open_v2;
  decltype(&sqlite3_close) close;
  decltype(&sqlite3_errmsg) errmsg;
  decltype(&sqlite3_prepare_v2) prepare_v2;
  decltype(&sqlite3_step) step;
  decltype(&sqlite3_finalize) finalize;
  decltype(&sqlite3_column_count) column_count;
  decltype(&sqlite3_column_name) column_name;
  decltype(&sqlite3_column_decltype) column_decltype;
  decltype(&sqlite3_column_type) column_type;
  decltype(&sqlite3_column_text) column_text;
  decltype(&sqlite3_column_bytes) column_bytes;
  decltype(&sqlite3_column_double) column_double;
  decltype(&sqlite3_column_int64) column_int64;
  decltype(&sqlite3_exec) exec;
  decltype(&sqlite3_busy_timeout) busy_timeout;
};

Result<const SqliteApi*> LoadSqlite() {
  static std::mutex mu;
  static SqliteApi api;
  static Status loaded = Internal("not loaded");
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!tried) {
    tried = true;
    auto lib = SharedLibrary::Open({"libsqlite3.so.0", "libsqlite3.so"}, "SQLite support",
                                   "install SQLite (Debian: apt-get install libsqlite3-0)");
    if (!lib.ok()) {
      loaded = lib.status();
    } else {
      loaded = [&]() -> Status {
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_open_v2", &api.open_v2));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_close", &api.close));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_errmsg", &api.errmsg));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_prepare_v2", &api.prepare_v2));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_step", &api.step));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_finalize", &api.finalize));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_count", &api.column_count));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_name", &api.column_name));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_decltype", &api.column_decltype));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_type", &api.column_type));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_text", &api.column_text));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_bytes", &api.column_bytes));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_double", &api.column_double));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_column_int64", &api.column_int64));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_exec", &api.exec));
        EDL_RETURN_IF_ERROR(lib->Find("sqlite3_busy_timeout", &api.busy_timeout));
        return Status::Ok();
      }();
    }
  }
  if (!loaded.ok()) return loaded;
  return &api;
}

// SQLite's type affinity of a declared type (https://sqlite.org/datatype3.html, 3.1).
SqlType Affinity(const char* declared) {
  if (declared == nullptr || *declared == '\0') return SqlType::kOther;
  std::string t = declared;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::toupper(c); });
  auto has = [&](const char* s) { return t.find(s) != std::string::npos; };
  if (has("INT")) return SqlType::kInteger;
  if (has("CHAR") || has("CLOB") || has("TEXT")) return SqlType::kText;
  if (has("BLOB")) return SqlType::kOther;
  if (has("BOOL")) return SqlType::kBool;
  return SqlType::kReal;  // REAL, FLOA, DOUB and NUMERIC affinities
}

class SqliteRows : public SqlRows {
 public:
  // `types` empty: every field as text; else kReal fields holding a
  // number come as numbers only.
  SqliteRows(const SqliteApi* api, sqlite3* db, sqlite3_stmt* stmt, const std::string& where,
             std::vector<SqlType> types)
      : api_(api), db_(db), stmt_(stmt), where_(where), types_(std::move(types)) {
    const int n = api_->column_count(stmt_);
    cells_.fields.resize(n);
    cells_.nulls.resize(n);
    number_text_.resize(n);
    if (!types_.empty()) {
      types_.resize(n, SqlType::kText);
      cells_.is_number.resize(n);
      cells_.numbers.resize(n);
    }
  }
  ~SqliteRows() override { api_->finalize(stmt_); }

  Result<bool> Next() override {
    if (done_) return false;
    const int rc = api_->step(stmt_);
    if (rc == SQLITE_DONE) {
      done_ = true;
      return false;
    }
    if (rc != SQLITE_ROW) {
      done_ = true;
      return InvalidArgument(where_ + ": " + api_->errmsg(db_));
    }
    for (size_t i = 0; i < cells_.fields.size(); ++i) {
      const int c = static_cast<int>(i);
      const int type = api_->column_type(stmt_, c);
      cells_.nulls[i] = type == SQLITE_NULL;
      if (!types_.empty()) {
        cells_.is_number[i] =
            types_[i] == SqlType::kReal && (type == SQLITE_FLOAT || type == SQLITE_INTEGER);
        if (cells_.is_number[i]) {
          cells_.numbers[i] = api_->column_double(stmt_, c);
          cells_.fields[i] = std::string_view();
          continue;
        }
      }
      // Numbers are formatted here (shortest round-trip text), several
      // times faster than SQLite's own conversion to text.
      if (type == SQLITE_FLOAT || type == SQLITE_INTEGER) {
        char* at = number_text_[i].data();
        char* const end = at + number_text_[i].size();
        const auto r = type == SQLITE_FLOAT ? std::to_chars(at, end, api_->column_double(stmt_, c))
                                            : std::to_chars(at, end, api_->column_int64(stmt_, c));
        cells_.fields[i] = std::string_view(at, static_cast<size_t>(r.ptr - at));
        continue;
      }
      const auto* text = reinterpret_cast<const char*>(api_->column_text(stmt_, c));
      cells_.fields[i] =
          std::string_view(text ? text : "", text ? api_->column_bytes(stmt_, c) : 0);
    }
    return true;
  }

 private:
  const SqliteApi* api_;
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string where_;
  std::vector<SqlType> types_;
  bool done_ = false;
  std::vector<std::array<char, 32>> number_text_;  // numeric fields as text
};

class SqliteConnection : public SqlConnection {
 public:
  SqliteConnection(const SqliteApi* api, sqlite3* db, std::string where)
      : api_(api), db_(db), where_(std::move(where)) {}
  ~SqliteConnection() override { api_->close(db_); }

  Result<std::vector<SqlColumn>> Describe(const std::string& select) override {
    EDL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepare(select));
    std::vector<SqlColumn> columns;
    for (int i = 0; i < api_->column_count(stmt); ++i) {
      SqlColumn c;
      c.name = api_->column_name(stmt, i);
      const char* declared = api_->column_decltype(stmt, i);
      c.type = Affinity(declared);
      c.type_name = declared ? declared : "(no declared type)";
      columns.push_back(std::move(c));
    }
    api_->finalize(stmt);
    return columns;
  }

  Result<std::vector<std::string>> PrimaryKey(const std::string& table) override {
    EDL_ASSIGN_OR_RETURN(
        auto rows, Query("SELECT type FROM sqlite_schema WHERE name = " + QuoteLiteral(table)));
    EDL_ASSIGN_OR_RETURN(bool found, rows->Next());
    if (!found) return NotFound(where_ + ": table \"" + table + "\" does not exist");
    const bool is_table = rows->fields()[0] == "table";
    rows.reset();
    EDL_ASSIGN_OR_RETURN(rows, Query("SELECT name, pk FROM pragma_table_info(" +
                                     QuoteLiteral(table) + ") WHERE pk > 0 ORDER BY pk"));
    std::vector<std::string> key;
    for (;;) {
      EDL_ASSIGN_OR_RETURN(bool more, rows->Next());
      if (!more) break;
      key.emplace_back(rows->fields()[0]);
    }
    // A rowid table without a declared key is ordered by its rowid.
    if (key.empty() && is_table) key.push_back("rowid");
    return key;
  }

  Result<std::unique_ptr<SqlRows>> Query(const std::string& select) override {
    EDL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepare(select));
    return std::unique_ptr<SqlRows>(new SqliteRows(api_, db_, stmt, where_, {}));
  }

  Result<std::unique_ptr<SqlRows>> QueryTyped(const std::string& select,
                                              const std::vector<SqlType>& types) override {
    EDL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepare(select));
    return std::unique_ptr<SqlRows>(new SqliteRows(api_, db_, stmt, where_, types));
  }

  Status Execute(const std::string& sql) override {
    char* error = nullptr;
    if (api_->exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      std::string m = error ? error : api_->errmsg(db_);
      return InvalidArgument(where_ + ": " + m);
    }
    return Status::Ok();
  }

  bool broken() const override { return false; }
  Result<std::optional<int64_t>> CurrentXid() override { return std::optional<int64_t>(); }

 private:
  Result<sqlite3_stmt*> Prepare(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (api_->prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK) {
      const std::string m = api_->errmsg(db_);
      if (stmt) api_->finalize(stmt);
      if (m.rfind("no such table", 0) == 0) return NotFound(where_ + ": " + m);
      return InvalidArgument(where_ + ": " + m);
    }
    return stmt;
  }

  const SqliteApi* api_;
  sqlite3* db_;
  std::string where_;
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> ConnectSqlite(const SqlUrl& url) {
  EDL_ASSIGN_OR_RETURN(const SqliteApi* api, LoadSqlite());
  struct stat st;
  if (::stat(url.path.c_str(), &st) != 0) {
    return NotFound(url.text + ": database file " + url.path + " does not exist");
  }
  sqlite3* db = nullptr;
  const int rc =
      api->open_v2(url.path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string m = db ? api->errmsg(db) : "out of memory";
    if (db) api->close(db);
    return IoError(url.text + ": cannot open " + url.path + ": " + m);
  }
  api->busy_timeout(db, 30000);
  return std::unique_ptr<SqlConnection>(new SqliteConnection(api, db, url.text));
}

}  // namespace edl::data
