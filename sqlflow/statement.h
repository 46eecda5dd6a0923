// Statement: one SQLFlow extended SELECT (https://sql-machine-learning.github.io
// grammar, as ElasticDL's SQLFlow integration took it), parsed:
//
//   SELECT list FROM table [WHERE cond] [LIMIT n]
//     TO TRAIN model [WITH attr = value, ...] [COLUMN column, ...] [LABEL col] INTO name
//   SELECT ... TO PREDICT table.column [WITH ...] USING name
//   SELECT ... TO EVALUATE name [WITH ...] [LABEL col] INTO table
//   SELECT ... [LABEL col] INTO name            (train a default model)
//
// `model` is a canned estimator (DNNClassifier, ...), a zoo model name, or a
// model spec file as a 'string'. COLUMN takes plain columns, NUMERIC(c),
// CATEGORY_ID(c, n), CATEGORY_HASH(c, n), BUCKET(NUMERIC(c), n) and
// EMBEDDING(<categorical>, dim). Attribute values are numbers, 'strings' or
// "strings", true/false, identifiers, or [lists] of these. Plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::sqlflow {

struct Attribute {
  std::string name;   // "model.hidden_units"
  std::string json;   // its value as JSON: 3, "x", true, [64, 32]
  std::string where;  // "line L, column C"
};

struct FeatureColumn {
  enum class Kind {
    kPlain,         // a bare column: numeric or, for text, a vocabulary from the data
    kNumeric,       // NUMERIC(c): normalized by the table's mean and deviation
    kCategoryId,    // CATEGORY_ID(c, n): the value is the id, in [0, n)
    kCategoryHash,  // CATEGORY_HASH(c, n): hashed into n buckets
    kBucket,        // BUCKET(NUMERIC(c), n): n quantile buckets of the table
  };
  Kind kind = Kind::kPlain;
  std::string column;
  int64_t buckets = 0;
  int64_t embedding_dim = 0;  // EMBEDDING(..., dim); 0 = none given
  std::string where;
};

struct Statement {
  enum class Kind { kTrain, kPredict, kEvaluate };
  Kind kind = Kind::kTrain;
  std::string text;      // the statement as written
  std::string where_at;  // "line L, column C" of its SELECT

  // The SELECT part.
  std::string select_list;  // as written ("*", "a, b, label")
  std::string table;        // FROM (unquoted; "schema.table" kept whole)
  std::string filter;       // WHERE condition as written, "" if none
  std::optional<int64_t> limit;

  // TO TRAIN: the model (empty for the default model); TO EVALUATE: the
  // trained model's name.
  std::string model;
  bool model_is_file = false;  // given as a 'string': a spec file
  std::vector<Attribute> with;
  std::vector<FeatureColumn> columns;
  std::string label;
  std::string into;  // TO TRAIN: the model's name; TO EVALUATE: the result table
  std::string predict_table;
  std::string predict_column;
  std::string using_model;
};

// The statements of `text`, separated by ';'. Errors name the line and
// column and say what was expected: "line 2, column 14: expected TRAIN,
// PREDICT or EVALUATE after TO, found 'TRIAN'".
Result<std::vector<Statement>> ParseStatements(const std::string& text);

}  // namespace edl::sqlflow
