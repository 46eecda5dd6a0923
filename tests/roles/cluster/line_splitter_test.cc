#include "roles/cluster/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "roles/cluster/cluster.h"

namespace edl::roles::cluster {
namespace {

TEST(LineSplitter, EmitsWholeLinesWithThePrefixAcrossChunks) {
  std::vector<std::string> lines;
  LineSplitter splitter("[w] ", [&](const std::string& l) { lines.push_back(l); });
  splitter.Append("he");
  EXPECT_TRUE(lines.empty());
  splitter.Append("llo\nwor");
  splitter.Append("ld\n\nta");
  EXPECT_EQ(lines, (std::vector<std::string>{"[w] hello", "[w] world", "[w] "}));
  splitter.Flush();
  EXPECT_EQ(lines.back(), "[w] ta");
  splitter.Flush();
  EXPECT_EQ(lines.size(), 4u);
}

TEST(LineSplitter, CutsALineLongerThanTheLimit) {
  std::vector<std::string> lines;
  LineSplitter splitter("", [&](const std::string& l) { lines.push_back(l); });
  splitter.Append(std::string(LineSplitter::kMaxLine + 10, 'x') + "\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), LineSplitter::kMaxLine);
  EXPECT_EQ(lines[1], std::string(10, 'x'));
}

TEST(ProcessExit, DescribesExitCodesAndSignals) {
  ProcessExit killed{"worker-1", 2, true, 9, false, false, {}};
  EXPECT_EQ(killed.ToString(), "worker-1 (incarnation 2) killed by signal 9");
  ProcessExit failed{"ps-0", 1, false, 3, false, false, {}};
  EXPECT_EQ(failed.ToString(), "ps-0 (incarnation 1) exited with code 3");
}

}  // namespace
}  // namespace edl::roles::cluster
