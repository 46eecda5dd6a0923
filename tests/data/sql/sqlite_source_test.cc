// A SQLite table as a data set: its rows, written by the sqlite3 tool, read
// by key order and decoded exactly as the same rows exported to CSV by the
// sqlite3 tool and read as a CSV file; bad tables and specs refused with
// messages naming the object; rows changed mid-job detected.
#include <random>

#include "data/csv_source.h"
#include "data/sql_source.h"
#include "tests/data/sql/sql_test_util.h"
#include "tests/data/test_files.h"

namespace edl::data {
namespace {

using sql_testing::Error;
using sql_testing::ExampleRows;
using sql_testing::ExampleSpec;
using sql_testing::Spec;
using sql_testing::Sqlite;
using sql_testing::Streamed;
using testing_files::ExpectSameExamples;
using testing_files::TempDir;

class SqliteSource : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("data.db");
    Sqlite(db_,
           "CREATE TABLE t (id INTEGER PRIMARY KEY, x REAL, y INTEGER, c TEXT, label INTEGER);\n" +
               ExampleRows(kRows));
  }
  // The table as the sqlite3 tool exports it to CSV, in key order.
  std::string ExportCsv() {
    const std::string csv = dir_.File("t.csv");
    Sqlite(db_, ".headers on\n.mode csv\n.output " + csv + "\nSELECT * FROM t ORDER BY id;\n");
    return csv;
  }
  std::string Url(const std::string& params = "table=t") { return "sqlite:" + db_ + "?" + params; }

  static constexpr int kRows = 1000;
  TempDir dir_;
  std::string db_;
};

TEST_F(SqliteSource, ReadsTheRowsInKeyOrderExactlyAsTheirCsvExport) {
  auto sql = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  auto csv = CsvSource::Open(ExportCsv(), Spec(ExampleSpec()).csv, LabelPolicy::kRequired);
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  ASSERT_EQ((*sql)->num_records(), kRows);
  ASSERT_TRUE((*sql)->streamed());
  auto a = (*sql)->Read(0, kRows);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ExpectSameExamples(*a, *(*csv)->Read(0, kRows));
}

TEST_F(SqliteSource, AnyRangeAndAnyCursorStepGiveTheRecordsOfThatRange) {
  auto sql = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(sql.ok()) << sql.status().ToString();
  auto csv = CsvSource::Open(ExportCsv(), Spec(ExampleSpec()).csv, LabelPolicy::kRequired);
  ASSERT_TRUE(csv.ok());
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    int64_t begin = rng() % kRows, end = rng() % (kRows + 1);
    if (begin > end) std::swap(begin, end);
    auto cursor = (*sql)->OpenCursor(begin, end);
    ASSERT_TRUE(cursor.ok());
    const int64_t step = 1 + rng() % 150;
    for (int64_t at = begin; at < end; at += step) {
      auto got = (*cursor)->Next(step);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ExpectSameExamples(*got, *(*csv)->Read(at, std::min(end, at + step)));
    }
    EXPECT_EQ((*(*cursor)->Next(step)).size(), 0);
  }
  auto gathered = (*sql)->Gather({130, 64, 65, 200});
  ASSERT_TRUE(gathered.ok());
  ExpectSameExamples(*gathered, *(*csv)->Gather({130, 64, 65, 200}));
}

TEST_F(SqliteSource, ATableWithoutADeclaredKeyIsReadInRowidOrder) {
  Sqlite(db_,
         "CREATE TABLE plain (x REAL, label INTEGER);\n"
         "INSERT INTO plain VALUES (0.5, 1), (1.5, 0), (2.5, 1);\n");
  auto s = OpenSource(Url("table=plain"), Spec(R"({"label": "label"})"), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto e = (*s)->Read(0, 3);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->inputs[0].data<float>()[2], 2.5f);
  EXPECT_EQ(e->labels.data<int64_t>()[1], 0);
}

TEST_F(SqliteSource, AQueryIsReadByTheKeyItNames) {
  auto s = OpenSource(Url("query=SELECT id, x, label FROM t WHERE y > 0&key=id"),
                      Spec(R"({"label": "label"})"), Streamed());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(std::to_string((*s)->num_records()) + "\n",
            Sqlite(db_, "SELECT count(*) FROM t WHERE y > 0;\n"));
  auto e = (*s)->Read(0, 1);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  // The smallest id with y = i % 11 - 5 > 0 is i = 6: x = 6 / 7.
  EXPECT_FLOAT_EQ(e->inputs[0].data<float>()[0], static_cast<float>(6 / 7.0));
}

TEST_F(SqliteSource, TheSpecMayHoldTheQueryForAUrlNamingOnlyTheDatabase) {
  InputSpec spec = Spec(R"({"label": "label", "numeric": ["x"],
                           "query": "SELECT id, x, label FROM t WHERE y > 0", "key": "id"})");
  auto by_spec = OpenSource("sqlite:" + db_, spec, Streamed());
  ASSERT_TRUE(by_spec.ok()) << by_spec.status().ToString();
  auto by_url =
      OpenSource(Url("query=SELECT id, x, label FROM t WHERE y > 0&key=id"), spec, Streamed());
  ASSERT_TRUE(by_url.ok()) << by_url.status().ToString();
  ASSERT_EQ((*by_spec)->num_records(), (*by_url)->num_records());
  ExpectSameExamples(*(*by_spec)->Read(0, (*by_spec)->num_records()),
                     *(*by_url)->Read(0, (*by_url)->num_records()));
  // The plan a master hands its workers carries the query.
  EXPECT_NE((*by_spec)->reopen_name().find("query=SELECT%20id"), std::string::npos);
  EXPECT_FALSE(InputSpecFromJson(R"({"query": "SELECT 1"})", "m").ok());
}

TEST_F(SqliteSource, LoadedWholeItIsTheSameData) {
  auto streamed = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  auto loaded = OpenSource(Url(), Spec(ExampleSpec()), OpenOptions{});
  ASSERT_TRUE(streamed.ok() && loaded.ok());
  EXPECT_FALSE((*loaded)->streamed());
  ExpectSameExamples(*(*loaded)->Read(0, kRows), *(*streamed)->Read(0, kRows));
}

TEST_F(SqliteSource, ADenseSerialKeyIsPlannedFromItsCountAndReadsAsAScannedOne) {
  Sqlite(db_,
         "CREATE TABLE dense (id INTEGER PRIMARY KEY, x REAL, label INTEGER);\n"
         "WITH RECURSIVE n(i) AS (SELECT 5 UNION ALL SELECT i + 1 FROM n WHERE i < 1004)\n"
         "INSERT INTO dense SELECT i, i * 0.5, i % 3 FROM n;\n");
  const InputSpec spec = Spec(R"({"label": "label"})");
  auto counted = OpenSource(Url("table=dense"), spec, Streamed());
  auto scanned = OpenSource(Url("query=SELECT * FROM dense&key=id"), spec, Streamed());
  ASSERT_TRUE(counted.ok() && scanned.ok());
  ASSERT_EQ((*counted)->num_records(), 1000);
  ASSERT_EQ((*scanned)->num_records(), 1000);
  for (int64_t begin : {0, 63, 64, 640, 999}) {
    ExpectSameExamples(*(*counted)->Read(begin, 1000), *(*scanned)->Read(begin, 1000));
  }
  // A gap makes the keys sparse: a table opened now is scanned.
  Sqlite(db_, "DELETE FROM dense WHERE id = 500;\n");
  EXPECT_FALSE((*counted)->Read(448, 512).ok());
  auto again = OpenSource(Url("table=dense"), spec, Streamed());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->num_records(), 999);
  EXPECT_EQ((*again)->Read(495, 496)->inputs[0].data<float>()[0], 501 * 0.5f);
}

// ---- bad input ----

TEST_F(SqliteSource, AMissingFileOrTableIsNamed) {
  auto r =
      OpenSource("sqlite:" + dir_.File("none.db") + "?table=t", Spec(ExampleSpec()), Streamed());
  EXPECT_NE(Error(r).find("none.db does not exist"), std::string::npos) << Error(r);
  r = OpenSource(Url("table=missing"), Spec(ExampleSpec()), Streamed());
  EXPECT_NE(Error(r).find("table \"missing\" does not exist"), std::string::npos) << Error(r);
}

TEST_F(SqliteSource, AColumnTheTableLacksIsNamed) {
  auto r = OpenSource(Url(), Spec(R"({"label": "label", "numeric": ["x", "weight"]})"), Streamed());
  EXPECT_NE(Error(r).find("weight"), std::string::npos) << Error(r);
}

TEST_F(SqliteSource, TextReadAsANumberIsRefusedWhenOpened) {
  auto r = OpenSource(Url(), Spec(R"({"label": "label", "numeric": ["x", "c"]})"), Streamed());
  EXPECT_NE(Error(r).find("column 'c' is TEXT but the spec reads it as a number"),
            std::string::npos)
      << Error(r);
}

TEST_F(SqliteSource, ATextValueInANumericColumnNamesTheRowKey) {
  Sqlite(db_, "UPDATE t SET x = 'abc' WHERE id = 301;\n");
  auto s = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(s.ok());
  auto e = (*s)->Read(0, kRows);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("row id=301: column 'x': cannot parse 'abc'"),
            std::string::npos)
      << e.status().ToString();
}

TEST_F(SqliteSource, ANullNamesTheRowAndColumnUnlessAMissingValueIsGiven) {
  Sqlite(db_, "UPDATE t SET y = NULL WHERE id = 97;\n");
  auto s = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(s.ok());
  auto e = (*s)->Read(0, kRows);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("row id=97 (NULL in 'y')"), std::string::npos)
      << e.status().ToString();
  std::string spec = ExampleSpec();
  spec.insert(1, R"("missing_value": -1, )");
  s = OpenSource(Url(), Spec(spec), Streamed());
  ASSERT_TRUE(s.ok());
  auto filled = (*s)->Read(32, 33);  // id 97 is record 32
  ASSERT_TRUE(filled.ok()) << filled.status().ToString();
  EXPECT_EQ(filled->inputs[0].data<float>()[1], -1.0f);
}

TEST_F(SqliteSource, AKeyThatIsNotAUniqueIntegerIsRefused) {
  auto r = OpenSource(Url("query=SELECT label AS k, x, label FROM t&key=k"),
                      Spec(R"({"label": "label"})"), Streamed());
  EXPECT_NE(Error(r).find("key column 'k' is not unique"), std::string::npos) << Error(r);
  r = OpenSource(Url("query=SELECT c, x, label FROM t&key=c"), Spec(R"({"label": "label"})"),
                 Streamed());
  EXPECT_NE(Error(r).find("key column 'c' is TEXT"), std::string::npos) << Error(r);
  r = OpenSource(Url("query=SELECT x, label FROM t"), Spec(R"({"label": "label"})"), Streamed());
  EXPECT_NE(Error(r).find("a query needs key=COLUMN"), std::string::npos) << Error(r);
  Sqlite(db_, "CREATE VIEW v AS SELECT x, label FROM t;\n");
  r = OpenSource(Url("table=v"), Spec(R"({"label": "label"})"), Streamed());
  EXPECT_NE(Error(r).find("has no primary key"), std::string::npos) << Error(r);
}

TEST_F(SqliteSource, IdentifiersAreQuotedNeverPasted) {
  auto r = OpenSource(Url("table=t%22; DROP TABLE t; --"), Spec(ExampleSpec()), Streamed());
  EXPECT_FALSE(r.ok());
  r = OpenSource(Url("table=t&key=id%22 FROM t; DROP TABLE t; --"), Spec(ExampleSpec()),
                 Streamed());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(Sqlite(db_, "SELECT count(*) FROM t;\n"), std::to_string(kRows) + "\n");
}

// ---- a fixed data set ----

TEST_F(SqliteSource, RowsInsertedOrDeletedInsideThePlanFailTheReadsOfTheirRange) {
  auto s = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(s.ok());
  Sqlite(db_, "DELETE FROM t WHERE id = 301;\n");  // record 100
  EXPECT_TRUE((*s)->Read(0, 64).ok());
  auto e = (*s)->Read(64, 192);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(e.status().message().find("the rows changed since the job planned its data set"),
            std::string::npos)
      << e.status().ToString();
  Sqlite(db_, "INSERT INTO t VALUES (301, 0, 0, 'red', 0), (302, 0, 0, 'red', 0);\n");
  EXPECT_FALSE((*s)->Read(64, 192).ok());
}

TEST_F(SqliteSource, RowsAddedPastThePlansLastKeyAreNotPartOfTheJob) {
  auto s = OpenSource(Url(), Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(s.ok());
  const std::string pinned = (*s)->reopen_name();
  Sqlite(db_, "INSERT INTO t VALUES (100000, 1, 1, 'red', 1);\n");
  EXPECT_TRUE((*s)->Read(kRows - 100, kRows).ok());
  // Another process of the job opens the pinned plan: the same rows.
  auto again = OpenSource(pinned, Spec(ExampleSpec()), Streamed());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->num_records(), kRows);
  EXPECT_EQ((*again)->reopen_name(), pinned);
  // A plan whose rows are gone is refused when opened.
  Sqlite(db_, "DELETE FROM t WHERE id = 1;\n");
  auto gone = OpenSource(pinned, Spec(ExampleSpec()), Streamed());
  EXPECT_NE(Error(gone).find("999 rows with id <= 2998 where there were 1000"), std::string::npos)
      << Error(gone);
}

}  // namespace
}  // namespace edl::data
