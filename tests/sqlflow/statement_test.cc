// SQLFlow statements parsed, and syntax errors naming the line, the column
// and what was expected.
#include "sqlflow/statement.h"

#include "gtest/gtest.h"

namespace edl::sqlflow {
namespace {

Statement One(const std::string& text) {
  auto s = ParseStatements(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return {};
  EXPECT_EQ(s->size(), 1u);
  return s->front();
}

std::string Error(const std::string& text) {
  auto s = ParseStatements(text);
  return s.ok() ? std::string("(parsed)") : s.status().message();
}

TEST(Statement, ParsesATrainStatementWithEveryClause) {
  Statement s =
      One("SELECT age, city, income FROM census.people WHERE age > 18 LIMIT 1000\n"
          "TO TRAIN DNNClassifier\n"
          "WITH model.hidden_units = [64, 32], model.n_classes = 3, train.epoch = 2,\n"
          "     validation.select = \"SELECT * FROM people_test\", model.optimizer = 'Adam'\n"
          "COLUMN NUMERIC(age), EMBEDDING(CATEGORY_HASH(city, 100), 8), BUCKET(NUMERIC(age), 4),\n"
          "       CATEGORY_ID(zone, 10), plain\n"
          "LABEL income\n"
          "INTO my_model;");
  EXPECT_EQ(s.kind, Statement::Kind::kTrain);
  EXPECT_EQ(s.select_list, "age, city, income");
  EXPECT_EQ(s.table, "census.people");
  EXPECT_EQ(s.filter, "age > 18");
  EXPECT_EQ(s.limit, 1000);
  EXPECT_EQ(s.model, "DNNClassifier");
  ASSERT_EQ(s.with.size(), 5u);
  EXPECT_EQ(s.with[0].name, "model.hidden_units");
  EXPECT_EQ(s.with[0].json, "[64, 32]");
  EXPECT_EQ(s.with[3].json, "\"SELECT * FROM people_test\"");
  ASSERT_EQ(s.columns.size(), 5u);
  EXPECT_EQ(s.columns[0].kind, FeatureColumn::Kind::kNumeric);
  EXPECT_EQ(s.columns[1].kind, FeatureColumn::Kind::kCategoryHash);
  EXPECT_EQ(s.columns[1].buckets, 100);
  EXPECT_EQ(s.columns[1].embedding_dim, 8);
  EXPECT_EQ(s.columns[2].kind, FeatureColumn::Kind::kBucket);
  EXPECT_EQ(s.columns[2].buckets, 4);
  EXPECT_EQ(s.columns[3].kind, FeatureColumn::Kind::kCategoryId);
  EXPECT_EQ(s.columns[4].kind, FeatureColumn::Kind::kPlain);
  EXPECT_EQ(s.label, "income");
  EXPECT_EQ(s.into, "my_model");
}

TEST(Statement, ParsesTheSeedStatementAsTrainingADefaultModel) {
  Statement s = One("SELECT * FROM employee LABEL income INTO my_elasticdl_model");
  EXPECT_EQ(s.kind, Statement::Kind::kTrain);
  EXPECT_EQ(s.model, "");
  EXPECT_EQ(s.label, "income");
  EXPECT_EQ(s.into, "my_elasticdl_model");
  // A column named label in the WHERE clause is not the LABEL clause.
  s = One("select * from t where label > 0 label label into m");
  EXPECT_EQ(s.filter, "label > 0");
  EXPECT_EQ(s.label, "label");
}

TEST(Statement, ParsesPredictAndEvaluate) {
  Statement p = One("SELECT * FROM test TO PREDICT out.predicted.class USING m");
  EXPECT_EQ(p.kind, Statement::Kind::kPredict);
  EXPECT_EQ(p.predict_table, "out.predicted");
  EXPECT_EQ(p.predict_column, "class");
  EXPECT_EQ(p.using_model, "m");
  Statement e =
      One("SELECT * FROM test TO EVALUATE m WITH validation.metrics = \"Accuracy,AUC\" LABEL y "
          "INTO scores");
  EXPECT_EQ(e.kind, Statement::Kind::kEvaluate);
  EXPECT_EQ(e.model, "m");
  EXPECT_EQ(e.with[0].json, "\"Accuracy,AUC\"");
  EXPECT_EQ(e.into, "scores");
}

TEST(Statement, ReadsSeveralStatementsCommentsAndQuotedNames) {
  auto s = ParseStatements(
      "-- train\nSELECT * FROM \"my table\" TO TRAIN 'models/spec.json' INTO \"the model\";\n"
      "/* then predict */ SELECT * FROM t TO PREDICT r.y USING \"the model\";");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].table, "my table");
  EXPECT_TRUE((*s)[0].model_is_file);
  EXPECT_EQ((*s)[0].model, "models/spec.json");
  EXPECT_EQ((*s)[0].into, "the model");
  EXPECT_EQ((*s)[1].using_model, "the model");
}

TEST(Statement, SyntaxErrorsNameTheLineColumnAndWhatWasExpected) {
  EXPECT_EQ(Error("SELECT * FROM t\nTO TRIAN DNNClassifier INTO m"),
            "line 2, column 4: expected TRAIN, PREDICT or EVALUATE after TO, found 'TRIAN'");
  EXPECT_EQ(Error("SELECT * FROM t"),
            "line 1, column 16: expected TO TRAIN, TO PREDICT, TO EVALUATE or INTO after the "
            "SELECT, found the end of the statement");
  EXPECT_EQ(Error("SELECT * FROM t TO TRAIN DNNClassifier LABEL y"),
            "line 1, column 47: expected INTO, found the end of the statement");
  EXPECT_EQ(Error("SELECT * t TO TRAIN x INTO m"),
            "line 1, column 29: expected FROM and a table after the SELECT list, found the end of "
            "the statement");
  EXPECT_EQ(Error("SELECT * FROM t JOIN u TO TRAIN x INTO m"),
            "line 1, column 17: expected WHERE, LIMIT or TO after the table (edl sql reads SELECT "
            "... FROM one table [WHERE ...] [LIMIT n]), found 'JOIN'");
  EXPECT_EQ(Error("SELECT * FROM t TO TRAIN x COLUMN NUMERIC(a), CATEGORY_ID(b) INTO m"),
            "line 1, column 60: expected ',', found ')'");
  EXPECT_EQ(Error("SELECT * FROM t TO TRAIN x COLUMN BUKET(a, 3) INTO m"),
            "line 1, column 35: expected NUMERIC, CATEGORY_ID, CATEGORY_HASH, BUCKET or "
            "EMBEDDING, found 'BUKET'");
  EXPECT_EQ(Error("SELECT * FROM t TO TRAIN x WITH model.units 3 INTO m"),
            "line 1, column 45: expected '=' after attribute model.units, found '3'");
  EXPECT_EQ(Error("SELECT * FROM t WHERE a = 'open"),
            "line 1, column 27: a string is not closed (missing ')");
  EXPECT_EQ(Error("SELECT * FROM t LIMIT x TO TRAIN y INTO m"),
            "line 1, column 23: expected a row count after LIMIT, found 'x'");
  EXPECT_EQ(Error("SELECT * FROM t TO TRAIN y INTO m extra"),
            "line 1, column 35: expected the end of the statement, found 'extra'");
  EXPECT_EQ(Error(" ; "), "line 1, column 1: expected a SELECT statement");
  EXPECT_EQ(Error("SELECT * FROM t TO PREDICT r USING m"),
            "line 1, column 30: expected '.' and the prediction column (TO PREDICT "
            "table.column), found 'USING'");
}

}  // namespace
}  // namespace edl::sqlflow
