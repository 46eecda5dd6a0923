// PostgreSQL's binary COPY format as the parser reads it: well-formed rows
// (the format as the PostgreSQL documentation lays it out; the server's own
// output is read in tests/data/sql/postgres_source_test.cc) and every kind
// of malformed data refused with what is wrong.
#include "data/pg_binary_copy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace edl::data {
namespace {

std::string Big(uint64_t v, int bytes) {
  std::string s;
  for (int i = bytes - 1; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

std::string Header(uint32_t extension = 0) {
  return std::string("PGCOPY\n\377\r\n\0", 11) + Big(0, 4) + Big(extension, 4) +
         std::string(extension, 'x');
}

std::string Field(const std::string& bytes) { return Big(bytes.size(), 4) + bytes; }
std::string Null() { return Big(0xffffffffu, 4); }
std::string Trailer() { return Big(0xffff, 2); }

std::string DoubleBytes(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return Big(bits, 8);
}

// One row of (kReal, kInteger, kBool, kText).
std::string Row(double x, int64_t k, bool b, const std::string& text) {
  return Big(4, 2) + Field(DoubleBytes(x)) + Field(Big(static_cast<uint64_t>(k), 8)) +
         Field(std::string(1, b ? 1 : 0)) + Field(text);
}

const std::vector<SqlType> kTypes = {SqlType::kReal, SqlType::kInteger, SqlType::kBool,
                                     SqlType::kText};

// A parsed row, copied out of the parser's buffers.
struct Cells {
  std::vector<std::string> fields;
  std::vector<char> nulls;
  std::vector<char> is_number;
  std::vector<double> numbers;
};

// Parses `data` to its end: its rows, or the error.
Result<std::vector<Cells>> ParseAll(const std::string& data,
                                    const std::vector<SqlType>& types = kTypes) {
  PgBinaryCopyParser parser(types);
  std::vector<Cells> rows;
  const char* at = data.data();
  const char* end = at + data.size();
  while (at != end) {
    SqlCells cells;
    EDL_ASSIGN_OR_RETURN(bool row, parser.Parse(&at, end, &cells));
    if (row) {
      rows.push_back({{cells.fields.begin(), cells.fields.end()},
                      cells.nulls,
                      cells.is_number,
                      cells.numbers});
    }
  }
  return rows;
}

TEST(PgBinaryCopy, ReadsNumbersAsNumbersAndTextAsItsBytes) {
  auto rows = ParseAll(Header() + Row(-2.5, -9007199254740993, true, "tab\there") +
                       Row(1e300, 42, false, "") + Trailer());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  const Cells& a = (*rows)[0];
  EXPECT_EQ(a.numbers[0], -2.5);
  EXPECT_TRUE(a.is_number[0]);
  EXPECT_EQ(a.fields[1], "-9007199254740993");
  EXPECT_EQ(a.fields[2], "t");
  EXPECT_EQ(a.numbers[2], 1.0);
  EXPECT_EQ(a.fields[3], "tab\there");
  EXPECT_FALSE(a.is_number[3]);
  EXPECT_EQ((*rows)[1].numbers[0], 1e300);
  EXPECT_EQ((*rows)[1].fields[1], "42");
  EXPECT_EQ((*rows)[1].fields[2], "f");
}

TEST(PgBinaryCopy, NarrowIntegersAndFloatsAndNullsAndAHeaderExtension) {
  float f = -0.1f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const std::string row = Big(4, 2) + Field(Big(bits, 4)) + Field(Big(0xfffe, 2)) + Null() +
                          Field(Big(static_cast<uint32_t>(-7), 4));
  auto rows = ParseAll(Header(5) + row + Trailer(),
                       {SqlType::kReal, SqlType::kInteger, SqlType::kText, SqlType::kInteger});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  const Cells& a = (*rows)[0];
  EXPECT_EQ(a.numbers[0], static_cast<double>(-0.1f));
  EXPECT_EQ(a.fields[1], "-2");
  EXPECT_TRUE(a.nulls[2]);
  EXPECT_FALSE(a.nulls[3]);
  EXPECT_EQ(a.numbers[3], -7.0);
}

TEST(PgBinaryCopy, AnEmptyResultIsTheHeaderAndTheTrailer) {
  auto rows = ParseAll(Header() + Trailer());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_TRUE(rows->empty());
}

void ExpectRefused(const std::string& data, const std::string& what) {
  auto rows = ParseAll(data);
  ASSERT_FALSE(rows.ok()) << "accepted: " << what;
  EXPECT_NE(rows.status().message().find(what), std::string::npos) << rows.status().ToString();
}

TEST(PgBinaryCopy, MalformedDataIsRefusedSayingWhatIsWrong) {
  const std::string row = Row(1, 2, true, "abc");
  ExpectRefused("PGCOPY\n" + row, "no binary COPY signature");
  ExpectRefused("text\tfields\n", "no binary COPY signature");
  ExpectRefused(Header().substr(0, 15) + Big(1000, 4) + "xx", "header extension of 1000 bytes");
  ExpectRefused(Header() + row.substr(0, 1), "without its field count");
  ExpectRefused(Header() + Big(3, 2) + row.substr(2), "a row of 3 fields where the query has 4");
  ExpectRefused(Header() + Big(0x8000, 2), "fields where the query has 4");
  ExpectRefused(Header() + row.substr(0, row.size() - 2),
                "field 4 of 3 bytes where the data holds 1");
  ExpectRefused(Header() + row.substr(0, 8), "field 1 of 8 bytes where the data holds 2");
  ExpectRefused(Header() + Big(4, 2) + Field("abc") + row.substr(14),
                "field 1: a float of 3 bytes");
  ExpectRefused(Header() + Big(4, 2) + Field(DoubleBytes(1)) + Field("abc") + row.substr(26),
                "field 2: an integer of 3 bytes");
  ExpectRefused(Header() + Big(4, 2) + Field(DoubleBytes(1)) + Field(Big(1, 8)) + Field("ab"),
                "field 3: a boolean of 2 bytes");
  ExpectRefused(Header() + Big(4, 2) + Big(0xfffffff0u, 4), "field 1 of -16 bytes");
  ExpectRefused(Header() + Trailer() + row, "data after the trailer");
}

}  // namespace
}  // namespace edl::data
