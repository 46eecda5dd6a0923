// edl sql end to end: SQLFlow statements on tables written by sqlite3 and
// psql, judged by SQL run by those tools (accuracy from a join of the
// prediction table with the labels, statistics recomputed), and bad
// statements refused with what is wrong and nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/testing/postgres_server.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::testing {
namespace {

RunResult Shell(const std::string& command) {
  return EdlProcess("/bin/sh", {"-c", command}).Wait();
}

// `sql` run by the sqlite3 tool on `db`; its output.
std::string Sqlite(const std::string& db, const std::string& sql) {
  RunResult r = Shell("sqlite3 -bail " + db + " <<'EDL_SQL'\n" + sql + "\nEDL_SQL\n");
  EXPECT_EQ(r.exit_code, 0) << sql << ": " << r.err;
  return r.out;
}

double Number(const std::string& text) { return std::stod(text); }

// Iris as table iris(id, four measurements, species text), imported by
// sqlite3 from scikit-learn's CSV.
std::string IrisCsv(const TempDir& dir) {
  const std::string csv = dir.File("iris_rows.csv");
  RunResult r = Shell("tail -n +2 " + std::string(EDL_SKLEARN_DATA) +
                      "/iris.csv | awk -F, 'BEGIN{split(\"setosa,versicolor,virginica\",s,\",\")} "
                      "{printf \"%d,%s,%s,%s,%s,%s\\n\", NR, $1, $2, $3, $4, s[$5+1]}' > " +
                      csv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return csv;
}

const char kIrisTable[] =
    "CREATE TABLE iris (id INTEGER PRIMARY KEY, sepal_length REAL, sepal_width REAL, "
    "petal_length REAL, petal_width REAL, species TEXT);";

class SqlCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.File("iris.db");
    Sqlite(db_, std::string(kIrisTable) + "\n.import --csv " + IrisCsv(dir_) + " iris");
  }
  RunResult Sql(const std::string& statements, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"sql",      "--database=sqlite:" + db_,
                                     statements, "--distribution_strategy=Local",
                                     "--seed=3", "--num_threads=1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunEdl(args);
  }
  TempDir dir_;
  std::string db_;
};

const char kTrain[] =
    "SELECT * FROM iris WHERE id % 5 <> 0\n"
    "TO TRAIN DNNClassifier\n"
    "WITH model.hidden_units = [16], model.learning_rate = 0.02, train.epoch = 40,\n"
    "     train.batch_size = 8\n"
    "COLUMN NUMERIC(sepal_length), NUMERIC(sepal_width), NUMERIC(petal_length),\n"
    "       NUMERIC(petal_width)\n"
    "LABEL species INTO iris_dnn";

TEST_F(SqlCommand, TrainsPredictsAndEvaluatesAndTheTablesAgreeWithSql) {
  RunResult train = Sql(kTrain);
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_NE(train.out.find("model iris_dnn saved in table edl_models of sqlite:"),
            std::string::npos)
      << train.out;
  RunResult rest =
      Sql("SELECT * FROM iris WHERE id % 5 = 0 TO PREDICT iris_pred.species USING iris_dnn;\n"
          "SELECT * FROM iris WHERE id % 5 = 0 TO EVALUATE iris_dnn "
          "WITH validation.metrics = \"Accuracy\" LABEL species INTO iris_eval;");
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_NE(rest.out.find("30 predictions written to table iris_pred"), std::string::npos)
      << rest.out;
  // The accuracy of the prediction table, by a join sqlite3 runs, is the
  // one edl evaluate wrote (to its 4 printed digits) and is learned.
  const double joined = Number(Sqlite(
      db_, "SELECT avg(p.species = i.species) FROM iris_pred p JOIN iris i ON p.id = i.id;"));
  const double reported =
      Number(Sqlite(db_, "SELECT value FROM iris_eval WHERE metric = 'accuracy';"));
  EXPECT_NEAR(joined, reported, 6e-5);
  EXPECT_GE(joined, 0.85);
  EXPECT_EQ(Sqlite(db_, "SELECT count(*) FROM iris_pred;"), "30\n");
}

TEST_F(SqlCommand, AStatementRunsAsAJobOnTheLocalClusterWithTheFlagsGiven) {
  RunResult r = RunEdl({"sql", "--database=sqlite:" + db_, kTrain,
                        "--distribution_strategy=ParameterServerStrategy", "--num_workers=2",
                        "--num_ps_pods=1", "--jobs_dir=" + dir_.File("jobs"), "--job_name=sql-job",
                        "--grace_period=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("job sql-job succeeded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model iris_dnn saved"), std::string::npos) << r.out;
  RunResult p = Sql("SELECT * FROM iris WHERE id % 5 = 0 TO PREDICT p.species USING iris_dnn");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(Sqlite(db_, "SELECT count(*) FROM p;"), "30\n");
}

TEST_F(SqlCommand, TheColumnStatisticsAreTheTablesAsSqlComputesThem) {
  ASSERT_EQ(Sql(kTrain).exit_code, 0);
  const nlohmann::json spec = nlohmann::json::parse(
      Sqlite(db_,
             "SELECT CAST(content AS TEXT) FROM edl_models WHERE name = 'iris_dnn' AND "
             "file = 'edl_spec.json';"));
  const nlohmann::json& norm = spec.at("input").at("normalize").at("petal_length");
  const double mean = Number(Sqlite(db_, "SELECT avg(petal_length) FROM iris WHERE id % 5 <> 0;"));
  const double sq =
      Number(Sqlite(db_, "SELECT avg(petal_length * petal_length) FROM iris WHERE id % 5 <> 0;"));
  EXPECT_NEAR(norm.at("mean").get<double>(), mean, 1e-9);
  EXPECT_NEAR(norm.at("std").get<double>(), std::sqrt(sq - mean * mean), 1e-6);
  EXPECT_EQ(spec.at("input").at("label_vocabulary"),
            nlohmann::json({"setosa", "versicolor", "virginica"}));
}

TEST_F(SqlCommand, BucketsAreTheTablesQuantilesAndTextColumnsTrainThroughEmbeddings) {
  Sqlite(db_,
         "CREATE TABLE shop (k INTEGER PRIMARY KEY, x REAL, city TEXT, code INTEGER, y INTEGER);\n"
         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)\n"
         "INSERT INTO shop SELECT i, i, CASE i % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END,\n"
         "  i % 7, (i > 50) FROM n;");
  RunResult r = RunEdl({"sql", "--database=sqlite:" + db_, "--model_dir=" + dir_.File("models"),
                        "SELECT * FROM shop TO TRAIN WideAndDeep WITH train.epoch = 2 "
                        "COLUMN BUCKET(NUMERIC(x), 4), EMBEDDING(CATEGORY_HASH(city, 16), 4), "
                        "CATEGORY_ID(code, 7) LABEL y INTO wd",
                        "--distribution_strategy=Local", "--num_threads=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json spec = nlohmann::json::parse(ReadText(dir_.File("models/wd/edl_spec.json")));
  // Values 1..100 in 4 buckets: the values at offsets 25, 50 and 75.
  EXPECT_EQ(spec.at("input").at("categorical").at(0).at("boundaries"),
            nlohmann::json({26.0, 51.0, 76.0}));
  r = RunEdl({"sql", "--database=sqlite:" + db_, "--model_dir=" + dir_.File("models"),
              "SELECT * FROM shop TO TRAIN DeepFM WITH train.epoch = 1 COLUMN x, city, "
              "CATEGORY_ID(code, 7) LABEL y INTO fm",
              "--distribution_strategy=Local", "--num_threads=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(SqlCommand, TheSeedStatementTrainsADefaultModelForTheLabel) {
  RunResult r = Sql("SELECT * FROM iris LABEL species INTO my_elasticdl_model");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("training a DNNClassifier (no TO TRAIN clause)"), std::string::npos)
      << r.err;
  EXPECT_EQ(Sqlite(db_,
                   "SELECT count(*) FROM edl_model_info WHERE name = "
                   "'my_elasticdl_model';"),
            "1\n");
}

TEST_F(SqlCommand, AModelNameThatExistsIsRefusedWithoutOverwrite) {
  ASSERT_EQ(Sql(kTrain).exit_code, 0);
  RunResult again = Sql(kTrain);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("model \"iris_dnn\" already exists in table edl_models"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(again.err.find("running: edl train"), std::string::npos) << "trained for nothing";
  EXPECT_EQ(Sql(kTrain, {"--overwrite"}).exit_code, 0);
}

TEST_F(SqlCommand, SyntaxErrorsNameTheLineAndColumn) {
  RunResult r = Sql("SELECT * FROM iris\nTO TRAIN DNNClassifier LABEL species INT m");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("edl: statement: line 2, column 38: expected INTO, found 'INT'"),
            std::string::npos)
      << r.err;
}

TEST_F(SqlCommand, NamesAndValuesAreQuotedNeverPasted) {
  ASSERT_EQ(Sql(kTrain).exit_code, 0);
  RunResult r = Sql("SELECT * FROM iris TO PREDICT \"p; DROP TABLE iris; --\".c USING iris_dnn");
  EXPECT_EQ(r.exit_code, 0) << r.err;  // a table with an odd name
  r =
      Sql("SELECT * FROM iris TO EVALUATE iris_dnn WITH validation.metrics = "
          "\"x'); DROP TABLE iris; --\" INTO e");
  EXPECT_NE(r.exit_code, 0);
  r = Sql("SELECT * FROM iris LABEL species INTO \"m'); DROP TABLE iris; --\"");
  EXPECT_NE(r.err.find("use letters, digits"), std::string::npos) << r.err;
  EXPECT_EQ(Sqlite(db_, "SELECT count(*) FROM iris;"), "150\n");
  EXPECT_EQ(Sqlite(db_, "SELECT count(*) FROM \"p; DROP TABLE iris; --\";"), "150\n");
}

TEST_F(SqlCommand, AFailedPredictionLeavesNoTable) {
  ASSERT_EQ(Sql(kTrain).exit_code, 0);
  Sqlite(db_, "UPDATE iris SET petal_width = NULL WHERE id = 42;");
  RunResult r = Sql("SELECT * FROM iris TO PREDICT out.species USING iris_dnn");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("row id=42 (NULL in 'petal_width')"), std::string::npos) << r.err;
  EXPECT_EQ(Sqlite(db_, "SELECT count(*) FROM sqlite_schema WHERE name = 'out';"), "0\n");
}

TEST_F(SqlCommand, AStoredModelNamingAFileOutsideItsDirectoryIsRefused) {
  ASSERT_EQ(Sql(kTrain).exit_code, 0);
  Sqlite(db_, "INSERT INTO edl_models VALUES ('iris_dnn', '../escaped', 0, X'00');");
  RunResult r = Sql("SELECT * FROM iris TO PREDICT out.species USING iris_dnn");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("model \"iris_dnn\" names file \"../escaped\", outside its directory"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("running: edl predict"), std::string::npos);
}

TEST_F(SqlCommand, AModelDirOnKubernetesAndTheFlagsTheStatementSetsAreRefused) {
  RunResult r = Sql(kTrain, {"--cluster=kube", "--model_dir=" + dir_.File("models")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--model_dir with --cluster=kube: the job's pods load stored models"),
            std::string::npos)
      << r.err;
  r = Sql(kTrain, {"--output=/tmp/x"});
  EXPECT_NE(r.err.find("--output=/tmp/x: the statement says what to read and write"),
            std::string::npos)
      << r.err;
}

TEST(SqlCommandPostgres, TrainsAndPredictsWithTheModelStoredInTheDatabase) {
  PostgresServer server;
  if (!server.ok()) EDL_SKIP_OR_FAIL_IN_CI(server.error());
  TempDir dir;
  ASSERT_EQ(
      server.Psql(std::string(kIrisTable) + "\n\\copy iris FROM '" + IrisCsv(dir) + "' CSV\n"), "");
  const std::string database = "postgresql://postgres@127.0.0.1:" + std::to_string(server.port()) +
                               "/postgres?passfile=" + server.passfile();
  RunResult r = RunEdl({"sql", "--database=" + database,
                        std::string(kTrain) + ";\nSELECT * FROM iris WHERE id % 5 = 0 TO PREDICT "
                                              "iris_pred.species USING iris_dnn;",
                        "--distribution_strategy=Local", "--seed=3", "--num_threads=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string accuracy = server.Psql(
      "SELECT avg(CASE WHEN p.species = i.species THEN 1.0 ELSE 0 END) FROM iris_pred p JOIN "
      "iris i ON p.id = i.id;");
  EXPECT_GE(Number(accuracy), 0.85) << accuracy;
  EXPECT_EQ(server.Psql("SELECT count(DISTINCT file) > 3 FROM edl_models WHERE name = "
                        "'iris_dnn';"),
            "t\n");
}

}  // namespace
}  // namespace edl::testing
