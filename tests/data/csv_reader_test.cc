#include "data/csv_reader.h"

#include "gtest/gtest.h"

namespace edl::data {
namespace {

using Records = std::vector<std::vector<std::string>>;

Records ReadAll(const std::string& text, char delimiter = ',') {
  CsvReader r(text, delimiter, "t.csv");
  Records out;
  while (true) {
    auto more = r.Next();
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    out.push_back(r.fields());
  }
  return out;
}

std::string FirstError(const std::string& text) {
  CsvReader r(text, ',', "t.csv");
  while (true) {
    auto more = r.Next();
    if (!more.ok()) return more.status().message();
    if (!*more) return "no error";
  }
}

TEST(CsvReader, SplitsPlainFieldsAndKeepsEmptyOnes) {
  EXPECT_EQ(ReadAll("a,b,c\n1,,3\n,,\n"), (Records{{"a", "b", "c"}, {"1", "", "3"}, {"", "", ""}}));
}

TEST(CsvReader, UnquotesFieldsWithDelimitersQuotesAndNewlines) {
  EXPECT_EQ(ReadAll("\"a, b\",\"say \"\"hi\"\"\",\"two\nlines\"\n\"\",x\n"),
            (Records{{"a, b", "say \"hi\"", "two\nlines"}, {"", "x"}}));
}

TEST(CsvReader, AcceptsCrLfAndAMissingFinalNewlineAndSkipsBlankLines) {
  EXPECT_EQ(ReadAll("a,b\r\n\r\n1,\"2\"\r\n3,4"), (Records{{"a", "b"}, {"1", "2"}, {"3", "4"}}));
  EXPECT_EQ(ReadAll("a\n1\n\n\n"), (Records{{"a"}, {"1"}}));
  EXPECT_EQ(ReadAll(""), Records{});
}

TEST(CsvReader, UsesAnotherDelimiter) {
  EXPECT_EQ(ReadAll("a\tb,c\n1\t2\n", '\t'), (Records{{"a", "b,c"}, {"1", "2"}}));
}

TEST(CsvReader, CountsLinesAcrossQuotedNewlines) {
  CsvReader r("h\n\"x\ny\"\n\nz\n", ',', "t.csv");
  ASSERT_TRUE(*r.Next());
  EXPECT_EQ(r.line(), 1);
  ASSERT_TRUE(*r.Next());
  EXPECT_EQ(r.line(), 2);
  ASSERT_TRUE(*r.Next());
  EXPECT_EQ(r.line(), 5);
  EXPECT_EQ(r.Where(), "t.csv:5");
  EXPECT_FALSE(*r.Next());
}

TEST(CsvReader, ReportsAnUnterminatedQuoteWithTheLineWhereItStarts) {
  EXPECT_EQ(FirstError("a,b\n1,2\n3,\"oops\n4,5\n"), "t.csv:3: unterminated quoted field 2");
}

TEST(CsvReader, ReportsTextAfterAClosingQuote) {
  EXPECT_EQ(FirstError("a,b\n\"x\"y,2\n"),
            "t.csv:2: unexpected character 'y' after the closing quote of field 1");
}

}  // namespace
}  // namespace edl::data
