// `edl predict` on a CSV of flattened inputs for a model saved by the real
// TensorFlow.js (tests/tfjs) whose input is int32 token ids: the ids reach
// the Embedding as ids, the predictions are TF.js' own, and bad ids or a
// wrong column count are errors that name the row, the column and the
// model's input. Skipped without node and tests/tfjs/node_modules; under
// CI=true that fails (tests/testing/skip.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/testing/paths.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::testing {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

const std::string kTfjsDir = edl::testing::SourceDir() + "/tests/tfjs";

bool HaveTfjs() {
  return std::system("node --version > /dev/null 2>&1") == 0 &&
         fs::exists(kTfjsDir + "/node_modules/@tensorflow/tfjs");
}

// TF.js builds and saves model `name` (and its inputs and predictions) in
// `dir`/name.
bool BuildTfjsModel(const std::string& dir, const std::string& name) {
  const std::string cmd =
      "cd '" + kTfjsDir + "' && node build_models.js '" + dir + "' " + name + " > /dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::string IdsCsv(const json& input) {
  const int64_t rows = input["shape"][0], cols = input["shape"][1];
  std::string csv;
  for (int64_t j = 0; j < cols; ++j) csv += (j ? ",t" : "t") + std::to_string(j);
  csv += "\n";
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      csv += (j ? "," : "") + std::to_string(input["data"][i * cols + j].get<int64_t>());
    }
    csv += "\n";
  }
  return csv;
}

TEST(PredictTfjs, ReadsTheTokenIdsOfAnInt32InputModelFromAFlattenedCsv) {
  if (!HaveTfjs()) {
    EDL_SKIP_OR_FAIL_IN_CI("node (Debian package nodejs) or tests/tfjs/node_modules is missing");
  }
  TempDir dir;
  ASSERT_TRUE(BuildTfjsModel(dir.path(), "masked_embedding"));
  const std::string model = dir.File("masked_embedding/model.json");
  const json io = json::parse(ReadText(dir.File("masked_embedding/io.json")));
  ASSERT_EQ(io["inputs"][0]["dtype"], "int32");
  WriteText(dir.File("ids.csv"), IdsCsv(io["inputs"][0]));

  RunResult p =
      RunEdl({"predict", "--model_def=" + model, "--prediction_data=" + dir.File("ids.csv"),
              "--output=" + dir.File("p.csv")});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  // Header, then per record the model's two outputs (and the class).
  std::istringstream lines(ReadText(dir.File("p.csv")));
  std::string line;
  std::getline(lines, line);
  const json& want = io["outputs"][0];
  const int64_t cols = want["shape"][1];
  int64_t row = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string field;
    for (int64_t j = 0; j < cols; ++j) {
      ASSERT_TRUE(std::getline(fields, field, ',')) << line;
      const double expected = want["data"][row * cols + j];
      EXPECT_NEAR(std::stod(field), expected, 1e-5 + 1e-4 * std::fabs(expected))
          << "record " << row << " output " << j;
    }
    ++row;
  }
  EXPECT_EQ(row, want["shape"][0].get<int64_t>());
}

TEST(PredictTfjs, RefusesIdsOutsideTheEmbeddingAndAWrongColumnCountNamingWhatIsWrong) {
  if (!HaveTfjs()) {
    EDL_SKIP_OR_FAIL_IN_CI("node (Debian package nodejs) or tests/tfjs/node_modules is missing");
  }
  TempDir dir;
  ASSERT_TRUE(BuildTfjsModel(dir.path(), "masked_embedding"));
  const std::string model = dir.File("masked_embedding/model.json");
  // The Embedding has input_dim 10: id 10 on row 2 is out of range.
  WriteText(dir.File("big.csv"), "t0,t1,t2,t3,t4,t5\n1,2,3,4,5,6\n1,2,10,4,5,6\n");
  RunResult big =
      RunEdl({"predict", "--model_def=" + model, "--prediction_data=" + dir.File("big.csv"),
              "--output=" + dir.File("big_out.csv")});
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_NE(big.err.find("row 3"), std::string::npos) << big.err;
  EXPECT_NE(big.err.find("column 't2': '10' is not an id in [0, 10)"), std::string::npos)
      << big.err;
  EXPECT_FALSE(fs::exists(dir.File("big_out.csv")));

  WriteText(dir.File("frac.csv"), "t0,t1,t2,t3,t4,t5\n1,2,3.5,4,5,6\n");
  RunResult frac =
      RunEdl({"predict", "--model_def=" + model, "--prediction_data=" + dir.File("frac.csv"),
              "--output=" + dir.File("frac_out.csv")});
  EXPECT_EQ(frac.exit_code, 1);
  EXPECT_NE(frac.err.find("'3.5' is not an id in [0, 10)"), std::string::npos) << frac.err;

  WriteText(dir.File("short.csv"), "t0,t1,t2\n1,2,3\n");
  RunResult short_rows =
      RunEdl({"predict", "--model_def=" + model, "--prediction_data=" + dir.File("short.csv"),
              "--output=" + dir.File("short_out.csv")});
  EXPECT_EQ(short_rows.exit_code, 1);
  EXPECT_NE(short_rows.err.find("a CSV of flattened inputs has 3 columns, but model input "
                                "\"input1\" takes [6] (6 values a record)"),
            std::string::npos)
      << short_rows.err;
}

}  // namespace
}  // namespace edl::testing
