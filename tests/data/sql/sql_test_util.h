// Helpers of the database tests: running a tool (sqlite3, psql) that writes
// the tables edl reads, an input spec from JSON, opening streamed.
#pragma once

#include <array>
#include <cstdio>
#include <string>

#include "data/input_spec.h"
#include "data/source.h"
#include "gtest/gtest.h"

namespace edl::data::sql_testing {

// Runs a shell command; its stdout and stderr, and EXPECTs it succeeded.
inline std::string Run(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  EXPECT_EQ(status, 0) << command << ": " << out;
  return out;
}

// `sql` run by the sqlite3 command-line tool on `db`.
inline std::string Sqlite(const std::string& db, const std::string& sql) {
  const std::string file = db + ".sql";
  FILE* f = fopen(file.c_str(), "w");
  fputs(sql.c_str(), f);
  fclose(f);
  return Run("sqlite3 -bail " + db + " < " + file);
}

// How a worker opens data: streamed.
inline OpenOptions Streamed() {
  OpenOptions o;
  o.stream = true;
  return o;
}

// What opening failed with, or "(opened)".
inline std::string Error(const Result<std::unique_ptr<Source>>& r) {
  return r.ok() ? std::string("(opened)") : r.status().ToString();
}

inline InputSpec Spec(const std::string& json) {
  auto spec = InputSpecFromJson(json, "test spec");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? *spec : InputSpec{};
}

// INSERT statements for `n` rows of table t(id, x, y, c, label) in a
// shuffled key order with gaps: id = 3*i + 1, x = i/7, y = i % 11 - 5,
// c = one of four colors, label = i % 3.
inline std::string ExampleRows(int n) {
  std::string sql = "BEGIN;\n";
  const char* colors[] = {"red", "green", "blue", "it's"};
  for (int k = 0; k < n; ++k) {
    const int i = (k * 7919) % n;  // every i once (7919 is prime, n not a multiple)
    sql += "INSERT INTO t VALUES (" + std::to_string(3 * i + 1) + ", " + std::to_string(i) +
           " / 7.0, " + std::to_string(i % 11 - 5) + ", '" +
           (i % 4 == 3 ? std::string("it''s") : colors[i % 4]) + "', " + std::to_string(i % 3) +
           ");\n";
  }
  return sql + "COMMIT;\n";
}

inline const char* ExampleSpec() {
  return R"({"label": "label", "numeric": ["x", "y"], "normalize": {"x": {"mean": 10, "std": 4}},
             "categorical": [{"column": "c", "vocabulary": ["red", "green", "blue", "it's"]}]})";
}

}  // namespace edl::data::sql_testing
