// Distributed jobs reading a database table (data/sql_source.h), judged by
// the counting model's own weights (tests/testing/counting_job.h): every
// row's gradient applied exactly once per epoch through a worker killed
// mid-task (SQLite) and through a PostgreSQL server restarted mid-job with
// rows appended meanwhile; and a row deleted mid-job failing the job with a
// message that names the table.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>

#include "tests/testing/counting_job.h"
#include "tests/testing/job_report.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::testing {
namespace {

constexpr int kRecords = kCountingRecords;
constexpr int kEpochs = 3;

std::vector<std::string> CountingJob(const TempDir& dir, const std::string& name,
                                     const std::string& data) {
  return CountingJobArgs(dir, name, data, kEpochs, /*num_ps=*/1);
}

RunResult Shell(const std::string& command) {
  return EdlProcess("/bin/sh", {"-c", command}).Wait();
}

// The counting rows (DIR/train.csv) as SQLite table "train", imported by the
// sqlite3 tool.
std::string SqliteTable(const TempDir& dir) {
  const std::string db = dir.File("train.db");
  WriteText(dir.File("import.sql"),
            "CREATE TABLE train (rid INTEGER PRIMARY KEY, label REAL);\n"
            ".import --csv --skip 1 " +
                dir.File("train.csv") + " train\n");
  RunResult r = Shell("sqlite3 -bail " + db + " < " + dir.File("import.sql"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return db;
}

TEST(SqlJob, AWorkerKilledMidTaskOnASqliteTableLeavesEveryRowAppliedOncePerEpoch) {
  TempDir dir;
  WriteCountingJob(dir);
  const std::string db = SqliteTable(dir);
  EdlProcess job(CountingJob(dir, "sqlite", "sqlite:" + db + "?table=train"));
  int victim = -1;
  ASSERT_TRUE(WaitFor(
      [&] {
        victim = StopAWorkerHoldingATrainingTask(dir.path(), "sqlite");
        return victim > 0;
      },
      60))
      << job.Err();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("killed by signal 9; relaunching"), std::string::npos) << r.err;
  const std::map<float, int> rows = RowHistogram(dir.File("out"));
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
}

TEST(SqlJob, APostgresTableSurvivesAServerRestartAndRowsAppendedMidJob) {
  PostgresServer server;
  if (!server.ok()) EDL_SKIP_OR_FAIL_IN_CI(server.error());
  TempDir dir;
  WriteCountingJob(dir);
  ASSERT_EQ(server.Psql("CREATE TABLE train (rid bigint PRIMARY KEY, label double precision);\n"
                        "\\copy train FROM '" +
                        dir.File("train.csv") + "' CSV HEADER\n"),
            "");
  EdlProcess job(CountingJob(dir, "postgres", server.Url("table=train")));
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "postgres")) >= 100; }, 60))
      << job.Err();
  // A row past the plan's last key: its id is beyond the model's table, so
  // a job that read it would fail.
  ASSERT_EQ(
      server.Psql("INSERT INTO train VALUES (" + std::to_string(kRecords + 100) + ", 1000000);\n"),
      "");
  ASSERT_TRUE(server.Restart());
  RunResult r = job.Wait();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("retrying in"), std::string::npos) << "no read met the restart\n" << r.err;
  const std::map<float, int> rows = RowHistogram(dir.File("out"));
  EXPECT_EQ(rows, (std::map<float, int>{{float{kEpochs}, kRecords}})) << Describe(rows);
}

TEST(SqlJob, ARowDeletedMidJobFailsTheJobNamingTheTable) {
  TempDir dir;
  WriteCountingJob(dir);
  const std::string db = SqliteTable(dir);
  EdlProcess job(CountingJob(dir, "drift", "sqlite:" + db + "?table=train"));
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "drift")) >= 20; }, 60))
      << job.Err();
  // (Waiting for the workers' reads between tasks: SQLite locks the file.)
  RunResult del =
      Shell("sqlite3 -cmd '.timeout 20000' " + db + " 'DELETE FROM train WHERE rid % 1000 = 7;'");
  ASSERT_EQ(del.exit_code, 0) << del.err;
  RunResult r = job.Wait();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("?table=train: the rows changed since the job planned its data set"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace edl::testing
