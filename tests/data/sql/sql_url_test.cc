// Database URLs of the data flags: what they name, and malformed ones refused
// with what is wrong.
#include "data/sql_url.h"

#include "gtest/gtest.h"

namespace edl::data {
namespace {

std::string Error(const std::string& url) {
  auto r = ParseSqlUrl(url);
  return r.ok() ? std::string("(parsed)") : r.status().message();
}

TEST(SqlUrl, NamesASqliteTableAndItsKey) {
  auto u = ParseSqlUrl("sqlite:/data/x.db?table=t&key=id");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->kind, SqlUrl::Kind::kSqlite);
  EXPECT_EQ(u->path, "/data/x.db");
  EXPECT_EQ(u->table, "t");
  EXPECT_EQ(u->key, "id");
  EXPECT_EQ(ParseSqlUrl("sqlite:///abs.db?table=t")->path, "/abs.db");
}

TEST(SqlUrl, PassesPostgresParametersToLibpqAndKeepsItsOwn) {
  auto u = ParseSqlUrl("postgresql://me@db:5433/prod?sslmode=verify-full&table=s.t&query_x=1");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->kind, SqlUrl::Kind::kPostgres);
  EXPECT_EQ(u->conninfo, "postgresql://me@db:5433/prod?sslmode=verify-full&query_x=1");
  EXPECT_EQ(u->table, "s.t");
  EXPECT_TRUE(ParseSqlUrl("postgres://h/db?table=t").ok());
}

TEST(SqlUrl, DecodesAQueryAndRequiresItsKey) {
  auto u = ParseSqlUrl("sqlite:x.db?query=SELECT%20a%2C%20b%20FROM%20t%20WHERE%20a%26b&key=a");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->query, "SELECT a, b FROM t WHERE a&b");
  EXPECT_NE(Error("sqlite:x.db?query=SELECT 1").find("a query needs key=COLUMN"),
            std::string::npos);
}

TEST(SqlUrl, PinsRoundTripAndAreLeftOutOfTheName) {
  auto u = ParseSqlUrl("postgresql://h/db?table=t");
  ASSERT_TRUE(u.ok());
  auto pinned = ParseSqlUrl(u->Pinned(1000, 2998, 7));
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_EQ(*pinned->rows, 1000);
  EXPECT_EQ(*pinned->max_key, 2998);
  EXPECT_EQ(*pinned->xid, 7);
  EXPECT_EQ(pinned->text, u->text);
  EXPECT_EQ(pinned->conninfo, "postgresql://h/db");
}

TEST(SqlUrl, RefusesMalformedUrlsSayingWhatIsWrong) {
  EXPECT_NE(Error("sqlite:?table=t").find("no database file"), std::string::npos);
  EXPECT_NE(Error("sqlite:x.db").find("name a table"), std::string::npos);
  EXPECT_NE(Error("sqlite:x.db?table=t&query=SELECT 1&key=a").find("not both"), std::string::npos);
  EXPECT_NE(Error("sqlite:x.db?table=t&sslmode=require").find("unknown parameter \"sslmode\""),
            std::string::npos);
  EXPECT_NE(Error("sqlite:x.db?table=t%2").find("two hex digits"), std::string::npos);
  EXPECT_NE(Error("sqlite:x.db?table=t&edl_rows=x&edl_max_key=1").find("not an integer"),
            std::string::npos);
  EXPECT_NE(Error("sqlite:x.db?table=t&edl_rows=5").find("come together"), std::string::npos);
  EXPECT_NE(Error("mysql://h/db?table=t").find("not a database URL"), std::string::npos);
}

TEST(SqlUrl, RefusesAPasswordWithoutEchoingIt) {
  for (const char* url :
       {"postgresql://me:hunter2@h/db?table=t", "postgresql://me@h/db?password=hunter2&table=t"}) {
    const std::string e = Error(url);
    EXPECT_NE(e.find("a password in the URL"), std::string::npos) << e;
    EXPECT_EQ(e.find("hunter2"), std::string::npos) << e;
  }
}

TEST(SqlUrl, TellsDatabaseUrlsFromFiles) {
  EXPECT_TRUE(IsSqlUrl("sqlite:x.db?table=t"));
  EXPECT_TRUE(IsSqlUrl("postgresql://h/db?table=t"));
  EXPECT_FALSE(IsSqlUrl("/data/train.csv"));
  EXPECT_FALSE(IsSqlUrl("sqlite.csv"));
}

}  // namespace
}  // namespace edl::data
