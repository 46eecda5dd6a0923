// A PostgreSQL table as a data set, on a server the test starts itself
// (tests/testing/postgres_server.h): rows written by psql, read back exactly
// as their CSV export by psql's \copy reads as a CSV file; authentication,
// reachability, keys, types, updates mid-job and a server restart mid-read.
#include <thread>

#include "data/csv_source.h"
#include "data/sql_source.h"
#include "tests/data/sql/sql_test_util.h"
#include "tests/data/test_files.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/skip.h"

namespace edl::data {
namespace {

using sql_testing::Error;
using sql_testing::ExampleRows;
using sql_testing::ExampleSpec;
using sql_testing::Spec;
using sql_testing::Streamed;
using testing_files::ExpectSameExamples;
using testing_files::TempDir;

constexpr int kRows = 1000;

// One server for the suite (starting one takes seconds); each test makes
// its own tables.
class PostgresSource : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new testing::PostgresServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    if (!server_->ok()) EDL_SKIP_OR_FAIL_IN_CI(server_->error());
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    schema_ = "s_" + std::to_string(std::hash<std::string>()(name) % 1000000007);
    ASSERT_EQ(Psql("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE; CREATE SCHEMA " + schema_ +
                   "; SET search_path = " + schema_ +
                   "; CREATE TABLE t (id bigint PRIMARY KEY, x double precision, y integer, "
                   "c text, label integer);\n" +
                   ExampleRows(kRows)),
              "");
  }
  std::string Psql(const std::string& sql) {
    return server_->Psql("SET search_path = " + (schema_.empty() ? "public" : schema_) + ";\n" +
                         sql);
  }
  std::string Url(const std::string& params = "table=t") {
    return server_->Url("options=-csearch_path%3D" + schema_ + "&" + params);
  }
  std::string ExportCsv() {
    const std::string csv = dir_.File("t.csv");
    EXPECT_EQ(Psql("\\copy (SELECT * FROM t ORDER BY id) TO '" + csv + "' CSV HEADER\n"), "");
    return csv;
  }

  static testing::PostgresServer* server_;
  std::string schema_;
  TempDir dir_;
};

testing::PostgresServer* PostgresSource::server_ = nullptr;

TEST_F(PostgresSource, ReadsTheRowsInKeyOrderExactlyAsTheirCsvExport) {
  auto sql = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  auto csv = CsvSource::Open(ExportCsv(), Spec(ExampleSpec()).csv, LabelPolicy::kRequired);
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  ASSERT_EQ((*sql)->num_records(), kRows);
  auto a = (*sql)->Read(0, kRows);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ExpectSameExamples(*a, *(*csv)->Read(0, kRows));
  for (int64_t begin : {0, 63, 64, 500, 999}) {
    auto part = (*sql)->Read(begin, std::min<int64_t>(kRows, begin + 77));
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    ExpectSameExamples(*part, *(*csv)->Read(begin, std::min<int64_t>(kRows, begin + 77)));
  }
}

TEST_F(PostgresSource, BooleanNumericAndEscapedTextColumnsDecode) {
  ASSERT_EQ(Psql("CREATE TABLE typed (k integer PRIMARY KEY, b boolean, n numeric(6,2), "
                 "s text, label real);\n"
                 "INSERT INTO typed VALUES (1, true, 12.5, E'tab\\there', 0.25), "
                 "(2, false, -3.75, E'back\\\\slash\\nline', 1.5);\n"),
            "");
  auto s = OpenSource(Url("table=typed"),
                      Spec(R"({"label": "label", "label_type": "float", "numeric": ["b", "n"],
                               "categorical": [{"column": "s", "vocabulary":
                                 ["tab\there", "back\\slash\nline"]}]})"),
                      Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto e = (*s)->Read(0, 2);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->inputs[0].data<float>()[0], 1.0f);
  EXPECT_EQ(e->inputs[0].data<float>()[1], 12.5f);
  EXPECT_EQ(e->inputs[0].data<float>()[2], 0.0f);
  EXPECT_EQ(e->inputs[0].data<float>()[3], -3.75f);
  EXPECT_EQ(e->inputs[1].data<int64_t>()[0], 1);  // vocabulary ids start at 1
  EXPECT_EQ(e->inputs[1].data<int64_t>()[1], 2);
  EXPECT_EQ(e->labels.data<float>()[1], 1.5f);
}

// Rows are read in binary COPY format, numbers as numbers: every column
// type a spec can read decodes to what the same rows' CSV export (psql's
// text for each type) decodes to.
TEST_F(PostgresSource, EveryColumnTypeDecodesAsItsCsvExport) {
  ASSERT_EQ(Psql("CREATE TABLE every (id integer PRIMARY KEY, s smallint, i integer, b bigint, "
                 "r real, d double precision, n numeric(12,4), t boolean, big bigint, rc real, "
                 "day date, v varchar(8), ch char(3), tx text, label smallint);\n"
                 "INSERT INTO every SELECT k, (k * 7 % 100) - 50, k * 1001 - 7000, "
                 "k * 123456789012 - 9, k / 7.0, k * 0.1 - 3.3, k * 1.2345 - 10, k % 3 = 0, "
                 "k * 9007199254740 - 4, k / 3.0, DATE '2026-01-01' + k, 'v' || k, "
                 "chr(97 + k % 26), 'é' || k, k % 4 FROM generate_series(1, 300) k;\n"),
            "");
  const std::string spec = R"({"label": "label",
      "numeric": ["s", "i", "b", "r", "d", "n", "t"],
      "categorical": [{"column": "big", "hash_buckets": 1000},
                      {"column": "rc", "hash_buckets": 1000},
                      {"column": "day", "hash_buckets": 1000},
                      {"column": "v", "hash_buckets": 1000},
                      {"column": "ch", "hash_buckets": 1000},
                      {"column": "tx", "hash_buckets": 1000}],
      "normalize": {"d": {"mean": 0.5, "std": 2.0}}})";
  auto sql = OpenSource(Url("table=every"), Spec(spec), Streamed());
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  // psql prints booleans as t/f; the CSV file reads them as 1/0 like the
  // table does.
  const std::string csv = dir_.File("every.csv");
  ASSERT_EQ(Psql("\\copy (SELECT s, i, b, r, d, n, CAST(t AS integer) AS t, big, rc, day, v, "
                 "ch, tx, label FROM every ORDER BY id) TO '" +
                 csv + "' CSV HEADER\n"),
            "");
  auto file = CsvSource::Open(csv, Spec(spec).csv, LabelPolicy::kRequired);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto a = (*sql)->Read(0, 300);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ExpectSameExamples(*a, *(*file)->Read(0, 300));
}

// A text column the spec reads as a number is read as text and parsed row
// by row (not cast by the server): numbers in it decode, anything else is
// refused naming the row.
TEST_F(PostgresSource, ATextLabelHoldingNumbersDecodesAndAWordNamesItsRow) {
  ASSERT_EQ(Psql("CREATE TABLE textual (k integer PRIMARY KEY, x double precision, label text);\n"
                 "INSERT INTO textual VALUES (1, 0.5, '1'), (2, 1.5, ' 0'), (3, 2.5, 'two');\n"),
            "");
  auto s =
      OpenSource(Url("table=textual"), Spec(R"({"label": "label", "numeric": ["x"]})"), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto two = (*s)->Read(0, 2);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->labels.data<int64_t>()[0], 1);
  EXPECT_EQ(two->labels.data<int64_t>()[1], 0);
  auto all = (*s)->Read(0, 3);
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("row k=3: label column 'label': cannot parse 'two'"),
            std::string::npos)
      << all.status().ToString();
}

TEST_F(PostgresSource, ANotANumberNamesTheRowKeyAndColumn) {
  ASSERT_EQ(Psql("UPDATE t SET x = 'NaN' WHERE id = 34;\n"), "");
  auto s = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto e = (*s)->Read(0, kRows);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("row id=34: column 'x': cannot parse 'nan'"),
            std::string::npos)
      << e.status().ToString();
}

TEST_F(PostgresSource, AWrongPasswordAndAnUnreachableServerAreToldApart) {
  const std::string wrong = dir_.File("passfile");
  testing_files::TempDir unused;
  {
    FILE* f = fopen(wrong.c_str(), "w");
    fputs("*:*:*:postgres:not-the-password\n", f);
    fclose(f);
    chmod(wrong.c_str(), 0600);
  }
  auto r = OpenSource("postgresql://postgres@127.0.0.1:" + std::to_string(server_->port()) +
                          "/postgres?passfile=" + wrong + "&table=t",
                      Spec(ExampleSpec()), Streamed());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated) << Error(r);
  EXPECT_NE(Error(r).find("password authentication failed"), std::string::npos) << Error(r);
  r = OpenSource("postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=5&table=t",
                 Spec(ExampleSpec()), Streamed());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << Error(r);
  EXPECT_NE(Error(r).find("cannot connect"), std::string::npos) << Error(r);
}

TEST_F(PostgresSource, APasswordInTheUrlIsRefused) {
  auto r = OpenSource("postgresql://postgres:secret@127.0.0.1/postgres?table=t",
                      Spec(ExampleSpec()), Streamed());
  EXPECT_NE(Error(r).find("a password in the URL"), std::string::npos) << Error(r);
  EXPECT_EQ(Error(r).find("secret@"), std::string::npos) << "the password is echoed: " << Error(r);
}

TEST_F(PostgresSource, MissingTablesColumnsAndKeysAreNamed) {
  auto r = OpenSource(Url("table=missing"), Spec(ExampleSpec()), Streamed());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << Error(r);
  EXPECT_NE(Error(r).find("table \"missing\" does not exist"), std::string::npos) << Error(r);
  r = OpenSource(Url(), Spec(R"({"label": "label", "numeric": ["x", "weight"]})"), Streamed());
  EXPECT_NE(Error(r).find("weight"), std::string::npos) << Error(r);
  ASSERT_EQ(Psql("CREATE TABLE nokey (x real, label integer);\n"), "");
  r = OpenSource(Url("table=nokey"), Spec(R"({"label": "label"})"), Streamed());
  EXPECT_NE(Error(r).find("table \"nokey\" has no primary key"), std::string::npos) << Error(r);
  r = OpenSource(Url(), Spec(R"({"label": "label", "numeric": ["x", "c"]})"), Streamed());
  EXPECT_NE(Error(r).find("column 'c' is text but the spec reads it as a number"),
            std::string::npos)
      << Error(r);
}

TEST_F(PostgresSource, ANullInANumericColumnNamesTheRowKey) {
  ASSERT_EQ(Psql("UPDATE t SET x = NULL WHERE id = 31;\n"), "");
  auto s = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto e = (*s)->Read(0, kRows);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("row id=31 (NULL in 'x')"), std::string::npos)
      << e.status().ToString();
}

TEST_F(PostgresSource, IdentifiersAreQuotedNeverPasted) {
  auto r = OpenSource(Url("table=t%22; DROP TABLE t; --"), Spec(ExampleSpec()), Streamed());
  EXPECT_FALSE(r.ok());
  r = OpenSource(Url("table=t&key=id%22) FROM t; DROP TABLE t; --"), Spec(ExampleSpec()),
                 Streamed());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(Psql("SELECT count(*) FROM t;\n"), std::to_string(kRows) + "\n");
}

TEST_F(PostgresSource, RowsUpdatedAfterThePlanFailTheReadNamingTheRow) {
  auto s = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->Read(0, kRows).ok());
  ASSERT_EQ(Psql("UPDATE t SET x = 0 WHERE id = 301;\n"), "");
  EXPECT_TRUE((*s)->Read(0, 64).ok());
  auto e = (*s)->Read(64, 128);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("row id=301 was written after the job planned"),
            std::string::npos)
      << e.status().ToString();
  ASSERT_EQ(Psql("DELETE FROM t WHERE id = 1000;\n"), "");  // i = 333: record 333
  e = (*s)->Read(320, 340);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("the rows changed since the job planned"), std::string::npos)
      << e.status().ToString();
}

TEST_F(PostgresSource, AReadResumesAfterTheServerRestartsWithNothingLostOrTwice) {
  auto sql = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  auto csv = CsvSource::Open(ExportCsv(), Spec(ExampleSpec()).csv, LabelPolicy::kRequired);
  ASSERT_TRUE(csv.ok());
  auto cursor = (*sql)->OpenCursor(0, kRows);
  ASSERT_TRUE(cursor.ok());
  auto first = (*cursor)->Next(300);
  ASSERT_TRUE(first.ok());
  ExpectSameExamples(*first, *(*csv)->Read(0, 300));
  ASSERT_TRUE(server_->Stop());
  // The cursor retries with backoff until the server is back.
  std::thread restart([] { server_->Start(); });
  auto rest = (*cursor)->Next(kRows);
  restart.join();
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  ExpectSameExamples(*rest, *(*csv)->Read(300, kRows));
  // Pooled connections of the old server are dropped, not reused broken.
  auto again = (*sql)->Read(0, kRows);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
}

TEST_F(PostgresSource, SslModeRequireRefusesAServerWithoutTls) {
  auto r = OpenSource(Url("sslmode=require&table=t"), Spec(ExampleSpec()), Streamed());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Error(r).find("server does not support SSL"), std::string::npos) << Error(r);
}

TEST(PostgresTls, VerifiesTheServerAgainstTheCaTheUrlNames) {
  testing::PostgresServer server(/*tls=*/true);
  if (!server.ok()) EDL_SKIP_OR_FAIL_IN_CI(server.error());
  ASSERT_EQ(server.Psql("CREATE TABLE t (id bigint PRIMARY KEY, x real, label integer);\n"
                        "INSERT INTO t VALUES (1, 0.5, 1), (2, 1.5, 0);\n"),
            "");
  const InputSpec spec = Spec(R"({"label": "label"})");
  auto s =
      OpenSource(server.Url("sslmode=verify-full&sslrootcert=" + server.ca_file() + "&table=t"),
                 spec, Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto e = (*s)->Read(0, 2);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->inputs[0].data<float>()[1], 1.5f);
  // The server was signed by another CA than the one the client trusts.
  auto r = OpenSource(
      server.Url("sslmode=verify-full&sslrootcert=" + server.other_ca_file() + "&table=t"), spec,
      Streamed());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << Error(r);
  EXPECT_NE(Error(r).find("certificate verify failed"), std::string::npos) << Error(r);
}

}  // namespace
}  // namespace edl::data
