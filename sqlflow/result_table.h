// Result tables of TO PREDICT and TO EVALUATE: created and filled in one
// transaction, so that a failed or killed run leaves no half table (and,
// with overwrite, the old table until the new one is complete).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/sql_connection.h"

namespace edl::sqlflow {

struct ResultColumn {
  std::string name;
  std::string type;  // BIGINT, DOUBLE PRECISION or TEXT (both databases take them)
};

// Yields the next row's values as text (numbers as decimal text; an empty
// optional is NULL) into *row, false after the last.
using NextRow = std::function<Result<bool>(std::vector<std::string>* row)>;

// Creates `table` with `columns` and the rows `next` yields. AlreadyExists
// naming the table when it exists and !overwrite. Values of TEXT columns
// are quoted; those of number columns must be numbers (InvalidArgument
// otherwise, nothing written).
Status WriteResultTable(data::SqlConnection& db, const std::string& table,
                        const std::vector<ResultColumn>& columns, const NextRow& next,
                        bool overwrite);

}  // namespace edl::sqlflow
