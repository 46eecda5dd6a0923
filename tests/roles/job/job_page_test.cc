// The job page (roles/job/job_page.h) in headless Chromium (Debian's
// chromium), its scripts run against a status served on loopback: what its
// tables show, cell by cell. The live job behind the page is tested end to
// end in tests/cmd/job_page_test.cc.
#include "roles/job/job_page.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "net/rpc.h"
#include "tests/testing/html_table.h"
#include "tests/testing/skip.h"

namespace edl::roles::job {
namespace {

// A running parameter-server job in its second of three epochs, as the
// master's /status reports it (keys sorted, as nlohmann writes them).
constexpr char kStatus[] = R"({
  "job": "page", "state": "running", "reason": "", "epoch": 3, "num_epochs": 3,
  "model_version": 1000, "records_trained_total": 60512, "workers": [], "workers_target": 1,
  "workers_registered": 3, "workers_lost": 2, "evaluations_total": 3,
  "incidents": [
    {"worker": "worker-1", "cause": "exited with signal 9", "detected_unix_s": 1767323045.25,
     "detection_s": 0.012, "to_request_s": 0.0005, "pending_s": 1.75, "to_step_s": 0.25,
     "tasks_put_back": 2, "records_put_back": 1024, "pending_reason": ""},
    {"worker": "worker-0", "cause": "preempted by the scheduler", "detected_unix_s": 1767323100,
     "detection_s": 2.5, "to_request_s": null, "pending_s": 123.5, "to_step_s": null,
     "tasks_put_back": 1, "records_put_back": 512,
     "pending_reason": "0/1 nodes are available: 1 Insufficient cpu."}],
  "checkpoint_incidents": [
    {"ps": "ps-1", "first_failed_version": 2000, "last_failed_version": 2250,
     "last_good_version": 1000, "failures": 2, "error": "disk full",
     "detected_unix_s": 1767323045.0, "recovered_version": null}],
  "ps": [{"address": "127.0.0.1:41000", "name": "ps-0", "num_threads": 4}],
  "ledger": [
    {"epoch": 1, "missing": 0, "pending": 0, "record_trainings": 60000, "records": 60000,
     "trained": 60000, "trained_more_than_once": 0, "redone": 2048},
    {"epoch": 2, "missing": 0, "pending": 59488, "record_trainings": 512, "records": 60000,
     "trained": 512, "trained_more_than_once": 0, "redone": 0},
    {"epoch": 3, "missing": 0, "pending": 60000, "record_trainings": 0, "records": 60000,
     "trained": 0, "trained_more_than_once": 0, "redone": 0}],
  "evaluations": [
    {"epoch": 1, "final": false, "loss": 0.5, "metrics": {"accuracy": 0.75},
     "model_version": 469, "samples": 10000},
    {"epoch": 1, "final": false, "loss": 0.25, "metrics": {"accuracy": 0.875},
     "model_version": 938, "samples": 10000}]
})";

int Shell(const std::string& command, std::string* out) {
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return ::pclose(p);
}

struct LoadedPage {
  std::string dom;           // what the page's scripts built from kStatus
  bool no_chromium = false;  // chromium is not installed
  std::string error;         // the server or Chromium failed
};

LoadedPage Load() {
  LoadedPage page;
  std::string version;
  if (Shell("chromium --version 2>/dev/null", &version) != 0) {
    page.no_chromium = true;
    return page;
  }
  net::ServerOptions so;
  so.secret = "job-page-test";
  net::RpcServer server(so);
  server.HandleGet(
      "/",
      [] {
        return net::HttpResponse{200, "text/html; charset=utf-8", kJobPageHtml};
      },
      true);
  server.HandleGet(
      "/status",
      [] {
        return net::HttpResponse{200, "application/json", kStatus};
      },
      true);
  server.HandleGet(
      "/series",
      [] {
        return net::HttpResponse{200, "application/json", R"({"series":{}})"};
      },
      true);
  if (Status s = server.Start(); !s.ok()) {
    page.error = s.message();
    return page;
  }
  // --virtual-time-budget lets the page's requests run before the DOM is
  // dumped; as root, Chromium needs --no-sandbox.
  const int rc = Shell(
      "chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 --dump-dom "
      "http://127.0.0.1:" +
          std::to_string(server.port()) + "/ 2>/dev/null",
      &page.dom);
  if (rc != 0) page.error = "chromium exited with " + std::to_string(rc);
  return page;
}

// Loaded once for all the tests.
const LoadedPage& Page() {
  static const LoadedPage page = Load();
  return page;
}

#define EDL_LOAD_PAGE_OR_SKIP()                                                          \
  do {                                                                                   \
    if (Page().no_chromium) {                                                            \
      EDL_SKIP_OR_FAIL_IN_CI("chromium is not installed (Debian package chromium)");     \
    }                                                                                    \
    ASSERT_EQ(Page().error, "");                                                         \
    ASSERT_NE(Page().dom.find("data-loaded=\"true\""), std::string::npos) << Page().dom; \
  } while (0)

using ::edl::testing::HtmlRow;
std::vector<HtmlRow> Rows(const std::string& dom, const std::string& id) {
  return ::edl::testing::HtmlTableRows(dom, id);
}
std::string Cell(const HtmlRow& row, const std::string& heading) {
  return ::edl::testing::HtmlCell(row, heading);
}
std::vector<std::string> Headings(const std::string& dom, const std::string& id) {
  return ::edl::testing::HtmlTableHeadings(dom, id);
}

TEST(JobPage, CallsARunningEpochsUntrainedRecordsPending) {
  EDL_LOAD_PAGE_OR_SKIP();
  const auto rows = Rows(Page().dom, "ledger");
  ASSERT_EQ(rows.size(), 2u) << Page().dom;  // the epoch not started is counted, not listed
  EXPECT_EQ(Cell(rows[1], "epoch"), "2");
  EXPECT_EQ(Cell(rows[1], "trained"), "512");
  EXPECT_EQ(Cell(rows[1], "pending"), "59,488");
  EXPECT_EQ(Cell(rows[1], "missing"), "0");
  EXPECT_EQ(Cell(rows[0], "pending"), "0");
  EXPECT_NE(Page().dom.find("1 epoch(s) not started"), std::string::npos);
}

TEST(JobPage, ShowsEachEpochsLedgerValues) {
  EDL_LOAD_PAGE_OR_SKIP();
  EXPECT_EQ(Headings(Page().dom, "ledger"),
            (std::vector<std::string>{"epoch", "records", "trained", "pending", "missing",
                                      "trained more than once", "record trainings",
                                      "redone for a restored PS"}));
  const auto rows = Rows(Page().dom, "ledger");
  ASSERT_EQ(rows.size(), 2u) << Page().dom;
  EXPECT_EQ(rows[0], (HtmlRow{{"epoch", "1"},
                              {"records", "60,000"},
                              {"trained", "60,000"},
                              {"pending", "0"},
                              {"missing", "0"},
                              {"trained more than once", "0"},
                              {"record trainings", "60,000"},
                              {"redone for a restored PS", "2,048"}}));
  EXPECT_EQ(Cell(rows[1], "records"), "60,000");
  EXPECT_EQ(Cell(rows[1], "record trainings"), "512");
}

TEST(JobPage, ListsFailedCheckpointsWithTheLastGoodVersion) {
  EDL_LOAD_PAGE_OR_SKIP();
  const auto rows = Rows(Page().dom, "checkpoint_incidents");
  ASSERT_EQ(rows.size(), 1u) << Page().dom;
  EXPECT_EQ(rows[0], (HtmlRow{{"PS", "ps-1"},
                              {"at (UTC)", "03:04:05"},
                              {"last good version", "1,000"},
                              {"first failed", "2,000"},
                              {"last failed", "2,250"},
                              {"failed attempts", "2"},
                              {"good again at", ""},
                              {"error", "disk full"}}));
}

TEST(JobPage, ListsEachIncidentWithItsCauseStagesAndTheWorkPutBack) {
  EDL_LOAD_PAGE_OR_SKIP();
  const auto rows = Rows(Page().dom, "incidents");
  ASSERT_EQ(rows.size(), 2u) << Page().dom;
  EXPECT_EQ(rows[0], (HtmlRow{{"worker", "worker-1"},
                              {"cause", "exited with signal 9"},
                              {"at (UTC)", "03:04:05"},
                              {"detection s", "0.01200"},
                              {"to request s", "0.0005000"},
                              {"pending s", "1.750"},
                              {"pending reason", ""},
                              {"to first step s", "0.2500"},
                              {"tasks put back", "2"},
                              {"records put back", "1,024"}}));
  // A stage not reached is an empty cell; the scheduler's reason is shown.
  EXPECT_EQ(Cell(rows[1], "worker"), "worker-0");
  EXPECT_EQ(Cell(rows[1], "cause"), "preempted by the scheduler");
  EXPECT_EQ(Cell(rows[1], "at (UTC)"), "03:05:00");
  EXPECT_EQ(Cell(rows[1], "to request s"), "");
  EXPECT_EQ(Cell(rows[1], "pending s"), "123.5");
  EXPECT_EQ(Cell(rows[1], "pending reason"), "0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_EQ(Cell(rows[1], "to first step s"), "");
  EXPECT_EQ(Cell(rows[1], "records put back"), "512");
}

TEST(JobPage, LabelsEachEvaluationWithTheEpochTheMasterGaveIt) {
  EDL_LOAD_PAGE_OR_SKIP();
  const auto rows = Rows(Page().dom, "evaluations");
  ASSERT_EQ(rows.size(), 2u) << Page().dom;
  EXPECT_EQ(Cell(rows[0], "model version"), "938");  // the newest first
  EXPECT_EQ(Cell(rows[0], "epoch"), "1");
  EXPECT_EQ(Cell(rows[0], "accuracy"), "0.8750");
  EXPECT_EQ(Headings(Page().dom, "evaluations"),
            (std::vector<std::string>{"epoch", "model version", "loss", "accuracy"}));
}

TEST(JobPage, ListsParameterServersByNameAddressAndThreads) {
  EDL_LOAD_PAGE_OR_SKIP();
  EXPECT_EQ(Headings(Page().dom, "ps"), (std::vector<std::string>{"name", "address", "threads"}));
  const auto rows = Rows(Page().dom, "ps");
  ASSERT_EQ(rows.size(), 1u) << Page().dom;
  EXPECT_EQ(Cell(rows[0], "name"), "ps-0");
  EXPECT_EQ(Cell(rows[0], "address"), "127.0.0.1:41000");
  EXPECT_EQ(Cell(rows[0], "threads"), "4");
}

}  // namespace
}  // namespace edl::roles::job
