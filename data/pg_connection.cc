// SqlConnection for PostgreSQL through libpq (loaded at run time). Rows
// stream with COPY (SELECT ...) TO STDOUT: in text format for Query, in
// binary format for QueryTyped (numbers arrive as numbers: neither side
// formats or parses them).
#include <libpq-fe.h>

#include <cstring>
#include <deque>
#include <mutex>

#include "data/pg_binary_copy.h"
#include "data/shared_library.h"
#include "data/sql_connection.h"

namespace edl::data {
namespace {

struct PqApi {
  decltype(&PQconnectdb) connectdb;
  decltype(&PQstatus) status;
  decltype(&PQerrorMessage) error_message;
  decltype(&PQfinish) finish;
  decltype(&PQexec) exec;
  decltype(&PQresultStatus) result_status;
  decltype(&PQresultErrorMessage) result_error_message;
  decltype(&PQresultErrorField) result_error_field;
  decltype(&PQclear) clear;
  decltype(&PQntuples) ntuples;
  decltype(&PQnfields) nfields;
  decltype(&PQfname) fname;
  decltype(&PQftype) ftype;
  decltype(&PQgetvalue) getvalue;
  decltype(&PQgetisnull) getisnull;
  decltype(&PQgetCopyData) get_copy_data;
  decltype(&PQgetResult) get_result;
  decltype(&PQfreemem) freemem;
  decltype(&PQconnectionNeedsPassword) needs_password;
};

Result<const PqApi*> LoadPq() {
  static std::mutex mu;
  static PqApi api;
  static Status loaded = Internal("not loaded");
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!tried) {
    tried = true;
    auto lib = SharedLibrary::Open({"libpq.so.5", "libpq.so"}, "PostgreSQL support",
                                   "install libpq (Debian: apt-get install libpq5)");
    if (!lib.ok()) {
      loaded = lib.status();
    } else {
      loaded = [&]() -> Status {
        EDL_RETURN_IF_ERROR(lib->Find("PQconnectdb", &api.connectdb));
        EDL_RETURN_IF_ERROR(lib->Find("PQstatus", &api.status));
        EDL_RETURN_IF_ERROR(lib->Find("PQerrorMessage", &api.error_message));
        EDL_RETURN_IF_ERROR(lib->Find("PQfinish", &api.finish));
        EDL_RETURN_IF_ERROR(lib->Find("PQexec", &api.exec));
        EDL_RETURN_IF_ERROR(lib->Find("PQresultStatus", &api.result_status));
        EDL_RETURN_IF_ERROR(lib->Find("PQresultErrorMessage", &api.result_error_message));
        EDL_RETURN_IF_ERROR(lib->Find("PQresultErrorField", &api.result_error_field));
        EDL_RETURN_IF_ERROR(lib->Find("PQclear", &api.clear));
        EDL_RETURN_IF_ERROR(lib->Find("PQntuples", &api.ntuples));
        EDL_RETURN_IF_ERROR(lib->Find("PQnfields", &api.nfields));
        EDL_RETURN_IF_ERROR(lib->Find("PQfname", &api.fname));
        EDL_RETURN_IF_ERROR(lib->Find("PQftype", &api.ftype));
        EDL_RETURN_IF_ERROR(lib->Find("PQgetvalue", &api.getvalue));
        EDL_RETURN_IF_ERROR(lib->Find("PQgetisnull", &api.getisnull));
        EDL_RETURN_IF_ERROR(lib->Find("PQgetCopyData", &api.get_copy_data));
        EDL_RETURN_IF_ERROR(lib->Find("PQgetResult", &api.get_result));
        EDL_RETURN_IF_ERROR(lib->Find("PQfreemem", &api.freemem));
        EDL_RETURN_IF_ERROR(lib->Find("PQconnectionNeedsPassword", &api.needs_password));
        return Status::Ok();
      }();
    }
  }
  if (!loaded.ok()) return loaded;
  return &api;
}

// libpq's messages end in a newline.
std::string Chomp(const char* s) {
  std::string m = s ? s : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

SqlType TypeOf(unsigned oid, std::string* name) {
  switch (oid) {
    case 16: *name = "boolean"; return SqlType::kBool;
    case 20: *name = "bigint"; return SqlType::kInteger;
    case 21: *name = "smallint"; return SqlType::kInteger;
    case 23: *name = "integer"; return SqlType::kInteger;
    case 700: *name = "real"; return SqlType::kReal;
    case 701: *name = "double precision"; return SqlType::kReal;
    case 1700: *name = "numeric"; return SqlType::kReal;
    case 25: *name = "text"; return SqlType::kText;
    case 1042: *name = "character"; return SqlType::kText;
    case 1043: *name = "character varying"; return SqlType::kText;
    case 19: *name = "name"; return SqlType::kText;
    default: *name = "type oid " + std::to_string(oid); return SqlType::kOther;
  }
}

// The rows of a COPY ... TO STDOUT: libpq hands over one CopyData message
// at a time (one row each as servers send them; a message holding several
// is read row by row); the subclass splits a row into fields, which are
// views into libpq's buffer, valid until the next row.
class PgCopyRows : public SqlRows {
 public:
  PgCopyRows(const PqApi* pq, PGconn* conn, const std::string& where, bool* busy)
      : pq_(pq), conn_(conn), where_(where), busy_(busy) {}
  ~PgCopyRows() override {
    if (buf_ != nullptr) pq_->freemem(buf_);
    *busy_ = !done_;
  }

  Result<bool> Next() override {
    while (!done_) {
      if (at_ == end_) {
        if (buf_ != nullptr) {
          pq_->freemem(buf_);
          buf_ = nullptr;
        }
        const int n = pq_->get_copy_data(conn_, &buf_, 0);
        if (n == -1) {
          done_ = true;
          return Finish();
        }
        if (n < 0) {
          done_ = true;
          return Lost();
        }
        at_ = buf_;
        end_ = buf_ + n;
      }
      EDL_ASSIGN_OR_RETURN(bool row, Parse());
      if (row) return true;
    }
    return false;
  }

 protected:
  // Reads one row from [at_, end_) into cells_.fields (advancing at_): true, or
  // false when what it read held no row (binary COPY's header or trailer).
  virtual Result<bool> Parse() = 0;

  Status Malformed(const std::string& what) const {
    return IoError(where_ + ": malformed COPY data from the server: " + what);
  }

  const char* at_ = nullptr;
  const char* end_ = nullptr;

 private:
  Result<bool> Finish() {
    Status s = Status::Ok();
    while (PGresult* r = pq_->get_result(conn_)) {
      if (s.ok() && pq_->result_status(r) != PGRES_COMMAND_OK) {
        s = InvalidArgument(where_ + ": " + Chomp(pq_->result_error_message(r)));
      }
      pq_->clear(r);
    }
    if (!s.ok() && pq_->status(conn_) == CONNECTION_BAD) return Lost();
    if (!s.ok()) return s;
    return false;
  }

  Status Lost() {
    return Unavailable(where_ + ": the connection was lost while reading rows: " +
                       Chomp(pq_->error_message(conn_)));
  }

  const PqApi* pq_;
  PGconn* conn_;
  std::string where_;
  bool* busy_;
  char* buf_ = nullptr;
  bool done_ = false;
};

// COPY's text format: one row a line, tab-separated, \N for NULL,
// backslash escapes.
class PgTextRows : public PgCopyRows {
 public:
  using PgCopyRows::PgCopyRows;

 private:
  Result<bool> Parse() override {
    const char* p = at_;
    const void* newline = std::memchr(at_, '\n', static_cast<size_t>(end_ - at_));
    size_t n = newline ? static_cast<size_t>(static_cast<const char*>(newline) - p)
                       : static_cast<size_t>(end_ - p);
    at_ = newline ? static_cast<const char*>(newline) + 1 : end_;
    cells_.fields.clear();
    cells_.nulls.clear();
    size_t start = 0;
    for (size_t k = 0;; ++k) {
      const void* tab = std::memchr(p + start, '\t', n - start);
      const size_t end = tab ? static_cast<size_t>(static_cast<const char*>(tab) - p) : n;
      std::string_view f(p + start, end - start);
      if (f == "\\N") {
        cells_.nulls.push_back(1);
        cells_.fields.emplace_back();
      } else {
        cells_.nulls.push_back(0);
        // Only a field holding an escape is decoded, into a buffer of its own.
        if (std::memchr(f.data(), '\\', f.size()) != nullptr) f = Unescape(f, k);
        cells_.fields.push_back(f);
      }
      if (tab == nullptr) break;
      start = end + 1;
    }
    return true;
  }

  // COPY's text escapes (\b \f \n \r \t \v, and \c for c) decoded into the
  // k-th field's buffer.
  std::string_view Unescape(std::string_view f, size_t k) {
    if (decoded_.size() <= k) decoded_.resize(k + 1);
    std::string& out = decoded_[k];
    out.clear();
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i] != '\\' || i + 1 >= f.size()) {
        out += f[i];
        continue;
      }
      const char e = f[++i];
      switch (e) {
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        default: out += e; break;
      }
    }
    return out;
  }

  // Fields that held escapes; a deque, so that growing it moves no string
  // whose view an earlier field of the row holds.
  std::deque<std::string> decoded_;
};

// Binary COPY rows (data/pg_binary_copy.h).
class PgBinaryRows : public PgCopyRows {
 public:
  PgBinaryRows(const PqApi* pq, PGconn* conn, const std::string& where, bool* busy,
               std::vector<SqlType> types)
      : PgCopyRows(pq, conn, where, busy), parser_(std::move(types)) {}

 private:
  Result<bool> Parse() override {
    Result<bool> row = parser_.Parse(&at_, end_, &cells_);
    if (!row.ok()) return Malformed(row.status().message());
    return row;
  }

  PgBinaryCopyParser parser_;
};

class PgConnection : public SqlConnection {
 public:
  PgConnection(const PqApi* pq, PGconn* conn, std::string where)
      : pq_(pq), conn_(conn), where_(std::move(where)) {}
  ~PgConnection() override { pq_->finish(conn_); }

  Result<std::vector<SqlColumn>> Describe(const std::string& select) override {
    EDL_ASSIGN_OR_RETURN(PGresult * r,
                         Run("SELECT * FROM (" + select + ") AS edl_d LIMIT 0", PGRES_TUPLES_OK));
    std::vector<SqlColumn> columns;
    for (int i = 0; i < pq_->nfields(r); ++i) {
      SqlColumn c;
      c.name = pq_->fname(r, i);
      c.type = TypeOf(pq_->ftype(r, i), &c.type_name);
      columns.push_back(std::move(c));
    }
    pq_->clear(r);
    return columns;
  }

  Result<std::vector<std::string>> PrimaryKey(const std::string& table) override {
    const std::string rel = QuoteLiteral(QuoteTable(table));
    EDL_ASSIGN_OR_RETURN(PGresult * r,
                         Run("SELECT to_regclass(" + rel + ") IS NOT NULL", PGRES_TUPLES_OK));
    const bool exists = std::string(pq_->getvalue(r, 0, 0)) == "t";
    pq_->clear(r);
    if (!exists) return NotFound(where_ + ": table \"" + table + "\" does not exist");
    EDL_ASSIGN_OR_RETURN(r, Run("SELECT a.attname FROM pg_index i JOIN pg_attribute a ON "
                                "a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE "
                                "i.indrelid = to_regclass(" +
                                    rel + ") AND i.indisprimary ORDER BY a.attnum",
                                PGRES_TUPLES_OK));
    std::vector<std::string> key;
    for (int i = 0; i < pq_->ntuples(r); ++i) key.push_back(pq_->getvalue(r, i, 0));
    pq_->clear(r);
    return key;
  }

  Result<std::unique_ptr<SqlRows>> Query(const std::string& select) override {
    EDL_ASSIGN_OR_RETURN(PGresult * r, Run("COPY (" + select + ") TO STDOUT", PGRES_COPY_OUT));
    pq_->clear(r);
    busy_ = true;
    return std::unique_ptr<SqlRows>(new PgTextRows(pq_, conn_, where_, &busy_));
  }

  Result<std::unique_ptr<SqlRows>> QueryTyped(const std::string& select,
                                              const std::vector<SqlType>& types) override {
    EDL_ASSIGN_OR_RETURN(PGresult * r,
                         Run("COPY (" + select + ") TO STDOUT (FORMAT binary)", PGRES_COPY_OUT));
    pq_->clear(r);
    busy_ = true;
    return std::unique_ptr<SqlRows>(new PgBinaryRows(pq_, conn_, where_, &busy_, types));
  }

  Status Execute(const std::string& sql) override {
    EDL_ASSIGN_OR_RETURN(PGresult * r, Run(sql, PGRES_COMMAND_OK));
    pq_->clear(r);
    return Status::Ok();
  }

  bool broken() const override { return busy_ || pq_->status(conn_) != CONNECTION_OK; }

  Result<std::optional<int64_t>> CurrentXid() override {
    EDL_ASSIGN_OR_RETURN(PGresult * r, Run("SELECT txid_current() % 4294967296", PGRES_TUPLES_OK));
    const int64_t xid = std::stoll(pq_->getvalue(r, 0, 0));
    pq_->clear(r);
    return std::optional<int64_t>(xid);
  }

 private:
  // Runs `sql`; the result (the caller clears it) when its status is
  // `want`, else an error naming the database and PostgreSQL's message.
  Result<PGresult*> Run(const std::string& sql, ExecStatusType want) {
    if (busy_) {
      return Internal(where_ + ": a query's rows are still being read on this connection");
    }
    PGresult* r = pq_->exec(conn_, sql.c_str());
    if (r != nullptr && pq_->result_status(r) == want) return r;
    std::string message = Chomp(r ? pq_->result_error_message(r) : pq_->error_message(conn_));
    const char* state = r ? pq_->result_error_field(r, PG_DIAG_SQLSTATE) : nullptr;
    const std::string code = state ? state : "";
    if (r != nullptr) pq_->clear(r);
    if (pq_->status(conn_) != CONNECTION_OK) {
      return Unavailable(where_ + ": the connection was lost: " + message);
    }
    if (code == "42P01") return NotFound(where_ + ": " + message);
    return InvalidArgument(where_ + ": " + message);
  }

  const PqApi* pq_;
  PGconn* conn_;
  std::string where_;
  bool busy_ = false;  // a COPY not read to its end
};

}  // namespace

Result<std::unique_ptr<SqlConnection>> ConnectPostgres(const SqlUrl& url) {
  EDL_ASSIGN_OR_RETURN(const PqApi* pq, LoadPq());
  PGconn* conn = pq->connectdb(url.conninfo.c_str());
  if (conn == nullptr) return ResourceExhausted(url.text + ": libpq could not allocate");
  if (pq->status(conn) != CONNECTION_OK) {
    const std::string message = Chomp(pq->error_message(conn));
    const bool auth = pq->needs_password(conn) ||
                      message.find("authentication failed") != std::string::npos ||
                      message.find("password") != std::string::npos;
    pq->finish(conn);
    if (auth) return Unauthenticated(url.text + ": " + message);
    return Unavailable(url.text + ": cannot connect: " + message);
  }
  // Numbers in full precision, dates unambiguous, whatever the server's
  // settings.
  auto c = std::make_unique<PgConnection>(pq, conn, url.text);
  EDL_RETURN_IF_ERROR(c->Execute("SET extra_float_digits = 3"));
  return std::unique_ptr<SqlConnection>(std::move(c));
}

}  // namespace edl::data
