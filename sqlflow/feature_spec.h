// FeatureSpec: a statement's COLUMN and LABEL clauses as the input spec a
// job reads its rows with (data/input_spec.h), the statistics it needs
// computed by the database in SQL over the statement's SELECT: means and
// standard deviations of NUMERIC columns (normalization), the distinct
// values of text columns (vocabularies), quantiles for BUCKET(NUMERIC(c), n)
// (boundaries), and the label's classes. The spec travels in the model's
// spec, so the exported model reads new rows exactly as it was trained.
//
// Without a COLUMN clause every selected column but the key and the label
// is a feature: numeric columns NUMERIC (normalized), text columns by
// vocabulary. Categorical columns share one embedding table
// (concat_with_offsets).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/sql_connection.h"
#include "sqlflow/select_plan.h"
#include "sqlflow/statement.h"

namespace edl::sqlflow {

struct FeatureSpec {
  std::string input_json;                     // the model spec's "input" object
  int64_t num_numeric = 0;                    // the [N, num_numeric] float input
  int64_t num_categorical = 0;                // the [N, num_categorical] ids input
  int64_t num_ids = 0;                        // rows of the shared embedding table
  int64_t embedding_dim = 0;                  // the largest EMBEDDING(..., dim); 0 = none given
  bool regression = false;                    // a float label
  int64_t num_classes = 0;                    // classification: label ids in [0, num_classes)
  std::vector<std::string> label_vocabulary;  // text labels, in id order
};

// Errors name the column and the statement's position: a column the SELECT
// does not return, a text column under NUMERIC or BUCKET, a label that is
// neither a number nor text, more distinct values than a vocabulary holds
// (use CATEGORY_HASH), no LABEL.
Result<FeatureSpec> BuildFeatureSpec(const Statement& s, const SelectPlan& plan,
                                     data::SqlConnection& db);

}  // namespace edl::sqlflow
