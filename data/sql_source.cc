#include "data/sql_source.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "base/check.h"
#include "base/logging.h"
#include "base/percent_encoding.h"

namespace edl::data {
namespace {

// How long a read retries a lost connection before it fails.
constexpr auto kRetryFor = std::chrono::seconds(60);

// The column names the spec names (they are read even when one is the key).
std::set<std::string> NamedColumns(const CsvSpec& spec) {
  std::set<std::string> names;
  auto add = [&](const ColumnRef& c) {
    if (!c.by_index) names.insert(c.name);
  };
  if (spec.has_label) add(spec.label);
  for (const ColumnRef& c : spec.numeric) add(c);
  for (const CategoricalColumn& c : spec.categorical) add(c.column);
  for (const auto& [name, norm] : spec.normalize) names.insert(name);
  return names;
}

bool IsNumber(SqlType t) {
  return t == SqlType::kInteger || t == SqlType::kReal || t == SqlType::kBool ||
         t == SqlType::kOther;  // SQLite expressions have no declared type: checked per row
}

// The columns the spec reads as numbers must have numeric types: a text
// column read as numbers would fail on its first row, so it is refused when
// the data is opened.
Status CheckTypes(const std::string& where, const CsvRowDecoder& decoder,
                  const std::vector<SqlColumn>& columns) {
  for (int64_t i : decoder.numeric_columns()) {
    const SqlColumn& c = columns[static_cast<size_t>(i)];
    if (!IsNumber(c.type)) {
      return InvalidArgument(where + ": column '" + c.name + "' is " + c.type_name +
                             " but the spec reads it as a number (make it categorical in the "
                             "spec's input, or list only numeric columns in input.numeric)");
    }
  }
  return Status::Ok();
}

// An integer the database returned for a count or a key (checked by the
// plan: a key that is not an integer is refused there).
int64_t Integer(const std::optional<std::string>& text) {
  return text ? ParseSqlInteger(*text).value_or(0) : 0;
}

}  // namespace

// Records [begin, end) of a plan, streamed: one query over the key range of
// the points around them, whose rows' count is checked against the plan.
class SqlSource::Cursor : public RecordCursor {
 public:
  Cursor(const SqlSource& source, int64_t begin, int64_t end)
      : source_(source), next_(begin), end_(end) {}
  ~Cursor() override {
    rows_.reset();
    // A cursor left mid-range: its connection is still in the read's
    // transaction (or mid-COPY); it is closed rather than pooled.
    if (db_ && !in_transaction_) source_.Release(std::move(db_));
  }

  Result<Examples> Next(int64_t n) override {
    ColumnBuffer out;
    EDL_RETURN_IF_ERROR(Fill(n, &out));
    return out.Slice(source_.layout(), 0, out.size);
  }

  // Decodes the next min(n, left) records into `out`, retrying a lost
  // connection from the record after the last one returned.
  Status Fill(int64_t n, ColumnBuffer* out) {
    const int64_t stop = std::min(end_, next_ + std::max<int64_t>(n, 0));
    const auto give_up = std::chrono::steady_clock::now() + kRetryFor;
    auto wait = std::chrono::milliseconds(100);
    while (next_ < stop) {
      Status s = Step(stop, out);
      if (s.ok()) continue;
      rows_.reset();
      db_.reset();
      in_transaction_ = false;
      if (s.code() != StatusCode::kUnavailable || std::chrono::steady_clock::now() > give_up) {
        return s;
      }
      EDL_LOG(WARNING) << s.message() << "; retrying in " << wait.count() << " ms";
      std::this_thread::sleep_for(wait);
      wait = std::min(wait * 2, std::chrono::milliseconds(5000));
    }
    return Status::Ok();
  }

 private:
  // Reads rows into `out` until `stop` (or an error).
  Status Step(int64_t stop, ColumnBuffer* out) {
    if (!rows_) {
      if (!db_) {
        EDL_ASSIGN_OR_RETURN(db_, source_.Acquire());
      }
      int64_t expected = 0;
      const std::string count_sql = source_.CountQuery(next_, end_, &expected);
      expected_ = expected;
      // The count and the rows from one snapshot of the table.
      EDL_RETURN_IF_ERROR(db_->Execute(source_.url_.kind == SqlUrl::Kind::kPostgres
                                           ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                                           : "BEGIN"));
      in_transaction_ = true;
      EDL_ASSIGN_OR_RETURN(auto counted, db_->QueryRow(count_sql));
      const int64_t held = counted.empty() ? 0 : Integer(counted[0]);
      // Rows whose xmin is younger than the plan's transaction id were
      // written after it.
      std::optional<int64_t> age;
      if (counted.size() > 1) age = Integer(counted[1]);
      if (held != expected_) return Drift(held);
      std::vector<SqlType> types(source_.types_.begin(), source_.types_.end() - (age ? 0 : 1));
      EDL_ASSIGN_OR_RETURN(rows_, db_->QueryTyped(source_.RangeQuery(next_, end_, age), types));
    }
    const size_t n = source_.decoder_->columns().size();
    while (next_ < stop) {
      EDL_ASSIGN_OR_RETURN(bool more, rows_->Next());
      if (!more) return Drift(-1);
      const auto& f = rows_->fields();
      const SqlCells& cells = rows_->cells();
      EDL_CHECK(cells.is_number.size() == f.size()) << "typed rows come with their numbers";
      if (f.size() > n + 1 && f[n + 1] == "t") {
        return FailedPrecondition(source_.name() + ": row " + source_.key_name_ + "=" +
                                  std::string(f[n]) +
                                  " was written after the job planned its data set; a job "
                                  "trains on the rows as they were when it started "
                                  "(docs/sql.md)");
      }
      TypedRow row;
      row.text = f.data();
      row.numbers = cells.numbers.data();
      row.is_number = cells.is_number.data();
      row.is_null = cells.nulls.data();
      row.size = n;
      Status s = source_.decoder_->Decode(row, out);
      if (!s.ok()) {
        std::string nulls;
        for (size_t i = 0; i < n; ++i) {
          if (rows_->null(i)) nulls += " '" + source_.decoder_->columns()[i] + "'";
        }
        return s.WithPrefix(source_.name() + ": row " + source_.key_name_ + "=" +
                            std::string(f[n]) + (nulls.empty() ? "" : " (NULL in" + nulls + ")"));
      }
      ++next_;
    }
    if (next_ == end_) {
      // Read the query to its end so that the connection can serve again.
      EDL_ASSIGN_OR_RETURN(bool extra, rows_->Next());
      EDL_CHECK(!extra) << "LIMIT returned more rows";
      rows_.reset();
      EDL_RETURN_IF_ERROR(db_->Execute("COMMIT"));
      in_transaction_ = false;
      source_.Release(std::move(db_));
    }
    return Status::Ok();
  }

  Status Drift(int64_t held) const {
    return FailedPrecondition(
        source_.name() +
        ": the rows changed since the job planned its data set: the key range "
        "of records from " +
        std::to_string(next_) + " holds " +
        (held < 0 ? std::string("fewer rows than read") : std::to_string(held) + " rows") +
        " where it held " + std::to_string(expected_) +
        " (rows were inserted or deleted; a job trains on the rows as they were when it "
        "started: docs/sql.md)");
  }

  const SqlSource& source_;
  int64_t next_;
  const int64_t end_;
  std::unique_ptr<SqlConnection> db_;
  std::unique_ptr<SqlRows> rows_;
  int64_t expected_ = 0;
  bool in_transaction_ = false;
};

SqlSource::~SqlSource() = default;

Result<std::unique_ptr<SqlSource>> SqlSource::Open(const std::string& value, const InputSpec& spec,
                                                   const OpenOptions& options) {
  // A URL naming only the database reads the spec's query.
  std::string url_text = value;
  if (!spec.query.empty() && value.find("table=") == std::string::npos &&
      value.find("query=") == std::string::npos) {
    url_text += (value.find('?') == std::string::npos ? "?" : "&") + std::string("query=") +
                PercentEncode(spec.query) + "&key=" + PercentEncode(spec.key);
  }
  EDL_ASSIGN_OR_RETURN(SqlUrl url, ParseSqlUrl(url_text));
  if (spec.format != DataFormat::kAuto && spec.format != DataFormat::kCsv) {
    return InvalidArgument(url.text +
                           ": a database is read with the spec's CSV fields; the spec's "
                           "input.format names another format");
  }
  std::unique_ptr<SqlSource> s(new SqlSource());
  s->url_ = std::move(url);
  const SqlUrl& u = s->url_;
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> db, ConnectSql(u));
  const std::string where = u.text;
  if (!u.table.empty()) {
    s->from_ = SqlConnection::QuoteTable(u.table);
    EDL_ASSIGN_OR_RETURN(std::vector<std::string> pk, db->PrimaryKey(u.table));
    if (u.key.empty() && pk.size() != 1) {
      return FailedPrecondition(
          where + ": table \"" + u.table + "\" has " +
          (pk.empty() ? std::string("no primary key") : "a primary key of several columns") +
          "; name an integer column with unique values as key=COLUMN (tasks are ranges of it)");
    }
    s->key_name_ = u.key.empty() ? pk[0] : u.key;
    s->key_is_primary_ = pk.size() == 1 && s->key_name_ == pk[0];
  } else {
    s->from_ = "(" + u.query + ") AS edl_q";
    s->key_name_ = u.key;
  }
  s->key_ = s->key_name_ == "rowid" && u.kind == SqlUrl::Kind::kSqlite
                ? std::string("rowid")
                : SqlConnection::QuoteIdentifier(s->key_name_);
  EDL_ASSIGN_OR_RETURN(std::vector<SqlColumn> all, db->Describe("SELECT * FROM " + s->from_));
  // The data columns: every column but the key, unless the spec names it.
  const std::set<std::string> named = NamedColumns(spec.csv);
  std::vector<SqlColumn> data;
  bool key_found = s->key_ == "rowid";
  for (const SqlColumn& c : all) {
    if (c.name == s->key_name_) {
      key_found = true;
      if (c.type != SqlType::kInteger && c.type != SqlType::kOther) {
        return FailedPrecondition(where + ": key column '" + c.name + "' is " + c.type_name +
                                  "; tasks are ranges of an integer key (name one with key=)");
      }
      if (!named.count(c.name)) continue;
    }
    data.push_back(c);
  }
  if (!key_found) {
    return InvalidArgument(where + ": key column '" + s->key_name_ + "' is not a column of the " +
                           u.Relation());
  }
  std::vector<std::string> names;
  for (const SqlColumn& c : data) names.push_back(c.name);
  CsvSpec csv = spec.csv;
  csv.column_names.clear();
  EDL_ASSIGN_OR_RETURN(s->decoder_, CsvRowDecoder::Create(where, names, csv, options.labels));
  EDL_RETURN_IF_ERROR(CheckTypes(where, *s->decoder_, data));
  for (size_t i = 0; i < data.size(); ++i) {
    std::string expr;
    const SqlType type =
        s->ReadAs(data[i], s->decoder_->ReadsAsNumber(static_cast<int64_t>(i)), &expr);
    s->columns_ += (s->columns_.empty() ? "" : ", ") + expr;
    s->types_.push_back(type);
  }
  s->check_xmin_ = u.kind == SqlUrl::Kind::kPostgres && !u.table.empty();
  s->types_.push_back(SqlType::kInteger);  // the key
  s->types_.push_back(SqlType::kBool);     // written after the plan (when xmin is checked)
  EDL_RETURN_IF_ERROR(s->Plan(*db));
  s->Release(std::move(db));
  return s;
}

// PostgreSQL's binary rows carry no types, so each column is read as one
// the reader knows: integers, reals and booleans (as integers) as numbers,
// numeric as double precision, text as it is, anything else as its text
// (parsed row by row when the spec reads it as a number). SQLite's cells
// carry their own types: columns are read as they are.
SqlType SqlSource::ReadAs(const SqlColumn& c, bool number, std::string* expr) const {
  const std::string q = SqlConnection::QuoteIdentifier(c.name);
  const bool pg = url_.kind == SqlUrl::Kind::kPostgres;
  *expr = q;
  if (number && !pg) return SqlType::kReal;  // SQLite: a cell holding a number comes as one
  if (number) {
    switch (c.type) {
      case SqlType::kReal:  // real and double precision as they are; numeric as a double
        if (c.type_name == "numeric") *expr = "CAST(" + q + " AS double precision)";
        return SqlType::kReal;
      case SqlType::kInteger: return SqlType::kInteger;
      case SqlType::kBool: *expr = "CAST(" + q + " AS integer)"; return SqlType::kInteger;
      default: break;  // as text, parsed row by row (an error names the row)
    }
  }
  if (!pg || c.type == SqlType::kText) return SqlType::kText;
  if (c.type == SqlType::kInteger) return SqlType::kInteger;
  if (c.type == SqlType::kBool) {
    *expr = "CAST(" + q + " AS integer)";
    return SqlType::kInteger;
  }
  *expr = "CAST(" + q + " AS text)";
  return SqlType::kText;
}

Status SqlSource::Plan(SqlConnection& db) {
  const std::string where = url_.text;
  if (url_.rows) {
    max_key_ = *url_.max_key;
    xid_ = url_.xid;
  } else {
    EDL_ASSIGN_OR_RETURN(xid_, db.CurrentXid());
    EDL_ASSIGN_OR_RETURN(auto max, db.QueryRow("SELECT max(" + key_ + ") FROM " + from_));
    const std::optional<std::string> text = max.empty() ? std::nullopt : max[0];
    if (text && !ParseSqlInteger(*text)) {
      return FailedPrecondition(where + ": key column '" + key_name_ + "' holds '" + *text +
                                "', not an integer");
    }
    max_key_ = Integer(text);
  }
  // A table's primary key (unique by the database's own constraint) whose
  // values are dense, as serial keys are: the points are computed, after
  // one count the database answers from its key index.
  if (key_is_primary_) {
    EDL_ASSIGN_OR_RETURN(
        auto stats, db.QueryRow("SELECT min(" + key_ + "), count(*) FROM " + from_ + " WHERE " +
                                key_ + " <= " + std::to_string(max_key_)));
    const bool have = stats.size() == 2 && stats[0] && ParseSqlInteger(*stats[0]).has_value();
    const int64_t lo = have ? Integer(stats[0]) : 0;
    const int64_t count = stats.size() == 2 ? Integer(stats[1]) : -1;
    if (count == 0 || (have && count > 0 && max_key_ - lo + 1 == count)) {
      for (int64_t i = 0; i * kStride < count; ++i) points_.push_back(lo + i * kStride);
      num_records_ = count;
      return CheckPinnedRows();
    }
  }
  // The key-only scan: every kStride-th key, and a check that keys are
  // unique integers.
  EDL_ASSIGN_OR_RETURN(auto rows,
                       db.Query("SELECT " + key_ + " FROM " + from_ + " WHERE " + key_ +
                                " <= " + std::to_string(max_key_) + " ORDER BY " + key_));
  int64_t n = 0, last = 0;
  for (;;) {
    EDL_ASSIGN_OR_RETURN(bool more, rows->Next());
    if (!more) break;
    const std::string_view k = rows->fields()[0];
    const std::optional<int64_t> key = rows->null(0) ? std::nullopt : ParseSqlInteger(k);
    if (!key) {
      return FailedPrecondition(where + ": key column '" + key_name_ + "' holds " +
                                (rows->null(0) ? std::string("NULL") : "'" + std::string(k) + "'") +
                                ", not an integer (tasks are ranges of an integer key)");
    }
    const int64_t v = *key;
    if (n > 0 && v == last) {
      return FailedPrecondition(where + ": key column '" + key_name_ + "' is not unique: " +
                                std::string(k) + " appears twice (name a unique column with key=)");
    }
    if (n % kStride == 0) points_.push_back(v);
    last = v;
    ++n;
  }
  num_records_ = n;
  return CheckPinnedRows();
}

Status SqlSource::CheckPinnedRows() const {
  if (url_.rows && *url_.rows != num_records_) {
    return FailedPrecondition(
        url_.text + ": the rows changed since the job planned its data set: " +
        std::to_string(num_records_) + " rows with " + key_name_ +
        " <= " + std::to_string(max_key_) + " where there were " + std::to_string(*url_.rows) +
        " (a job trains on the rows as they were when it started: "
        "docs/sql.md)");
  }
  return Status::Ok();
}

std::string SqlSource::reopen_name() const { return url_.Pinned(num_records_, max_key_, xid_); }

// The key range of the plan's points around [begin, end).
std::string SqlSource::KeyRange(int64_t begin, int64_t end, int64_t* expected) const {
  const int64_t p = begin / kStride;
  const int64_t q = (end + kStride - 1) / kStride;
  std::string where = key_ + " >= " + std::to_string(points_[p]) + " AND " + key_;
  if (q < static_cast<int64_t>(points_.size())) {
    where += " < " + std::to_string(points_[q]);
    if (expected) *expected = (q - p) * kStride;
  } else {
    where += " <= " + std::to_string(max_key_);
    if (expected) *expected = num_records_ - p * kStride;
  }
  return where;
}

std::string SqlSource::CountQuery(int64_t begin, int64_t end, int64_t* expected) const {
  std::string select = "SELECT count(*)";
  if (check_xmin_ && xid_) select += ", age(CAST('" + std::to_string(*xid_) + "' AS xid))";
  return select + " FROM " + from_ + " WHERE " + KeyRange(begin, end, expected);
}

std::string SqlSource::RangeQuery(int64_t begin, int64_t end, std::optional<int64_t> age) const {
  const int64_t p = begin / kStride;
  const std::string key =
      url_.kind == SqlUrl::Kind::kPostgres ? "CAST(" + key_ + " AS bigint)" : key_;
  std::string select = "SELECT " + columns_ + (columns_.empty() ? "" : ", ") + key;
  if (age) select += ", age(xmin) < " + std::to_string(*age);
  return select + " FROM " + from_ + " WHERE " + KeyRange(begin, end, nullptr) + " ORDER BY " +
         key_ + " LIMIT " + std::to_string(end - begin) + " OFFSET " +
         std::to_string(begin - p * kStride);
}

Result<std::unique_ptr<SqlConnection>> SqlSource::Acquire() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return ConnectSql(url_);
}

void SqlSource::Release(std::unique_ptr<SqlConnection> connection) const {
  if (!connection || connection->broken()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() < 4) idle_.push_back(std::move(connection));
}

Status SqlSource::DecodeRange(int64_t begin, int64_t end, ColumnBuffer* out) const {
  EDL_RETURN_IF_ERROR(CheckRange(begin, end));
  if (begin == end) return Status::Ok();
  Cursor cursor(*this, begin, end);
  return cursor.Fill(end - begin, out);
}

Result<Examples> SqlSource::Read(int64_t begin, int64_t end) const {
  ColumnBuffer out;
  EDL_RETURN_IF_ERROR(DecodeRange(begin, end, &out));
  return out.Slice(layout(), 0, out.size);
}

Result<Examples> SqlSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  if (indices.empty()) return Read(0, 0);
  const auto [lo, hi] = std::minmax_element(indices.begin(), indices.end());
  ColumnBuffer range;
  EDL_RETURN_IF_ERROR(DecodeRange(*lo, *hi + 1, &range));
  std::vector<int64_t> at(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) at[i] = indices[i] - *lo;
  return range.Gather(layout(), at.data(), static_cast<int64_t>(at.size()));
}

Result<std::unique_ptr<RecordCursor>> SqlSource::OpenCursor(int64_t begin, int64_t end) const {
  EDL_RETURN_IF_ERROR(CheckRange(begin, end));
  return std::unique_ptr<RecordCursor>(new Cursor(*this, begin, end));
}

}  // namespace edl::data
