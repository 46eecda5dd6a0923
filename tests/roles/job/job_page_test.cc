// The job page (roles/job/job_page.h) in headless Chromium (Debian's
// chromium), its scripts run against a status served on loopback: what its
// tables show, cell by cell. The live job behind the page is tested end to
// end in tests/cmd/job_page_test.cc.
#include "roles/job/job_page.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "net/rpc.h"
#include "tests/testing/skip.h"

namespace edl::roles::job {
namespace {

// A running parameter-server job in its second of three epochs, as the
// master's /status reports it (keys sorted, as nlohmann writes them).
constexpr char kStatus[] = R"({
  "job": "page", "state": "running", "reason": "", "epoch": 3, "num_epochs": 3,
  "model_version": 1000, "records_trained_total": 60512, "workers": [], "workers_target": 1,
  "workers_registered": 1, "workers_lost": 0, "incidents": [], "evaluations_total": 3,
  "ps": [{"address": "127.0.0.1:41000", "name": "ps-0", "num_threads": 4}],
  "ledger": [
    {"epoch": 1, "missing": 0, "pending": 0, "record_trainings": 60000, "records": 60000,
     "trained": 60000, "trained_more_than_once": 0},
    {"epoch": 2, "missing": 0, "pending": 59488, "record_trainings": 512, "records": 60000,
     "trained": 512, "trained_more_than_once": 0},
    {"epoch": 3, "missing": 0, "pending": 60000, "record_trainings": 0, "records": 60000,
     "trained": 0, "trained_more_than_once": 0}],
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

// The rows of the table in <div id="`id`">, each a map from the column's
// heading to the cell's text.
std::vector<std::map<std::string, std::string>> Rows(const std::string& dom,
                                                     const std::string& id) {
  std::vector<std::map<std::string, std::string>> rows;
  const size_t begin = dom.find("<div id=\"" + id + "\">");
  if (begin == std::string::npos) return rows;
  const size_t end = dom.find("</table>", begin);
  if (end == std::string::npos) return rows;
  const std::string table = dom.substr(begin, end - begin);
  const std::regex row("<tr>(.*?)</tr>"), cell("<t[hd]>(.*?)</t[hd]>");
  std::vector<std::string> headings;
  for (auto r = std::sregex_iterator(table.begin(), table.end(), row); r != std::sregex_iterator();
       ++r) {
    const std::string text = (*r)[1];
    std::vector<std::string> cells;
    for (auto c = std::sregex_iterator(text.begin(), text.end(), cell); c != std::sregex_iterator();
         ++c) {
      cells.push_back((*c)[1]);
    }
    if (headings.empty()) {
      headings = cells;
      continue;
    }
    std::map<std::string, std::string> values;
    for (size_t i = 0; i < cells.size() && i < headings.size(); ++i) values[headings[i]] = cells[i];
    rows.push_back(values);
  }
  return rows;
}

// The cell of `row` under `heading`, or "(no such column)".
std::string Cell(const std::map<std::string, std::string>& row, const std::string& heading) {
  auto it = row.find(heading);
  return it == row.end() ? "(no such column)" : it->second;
}

// The headings of the table in <div id="`id`">, in order.
std::vector<std::string> Headings(const std::string& dom, const std::string& id) {
  const size_t begin = dom.find("<div id=\"" + id + "\">");
  const size_t end = dom.find("</tr>", begin);
  std::vector<std::string> out;
  if (begin == std::string::npos || end == std::string::npos) return out;
  const std::string head = dom.substr(begin, end - begin);
  const std::regex th("<th>(.*?)</th>");
  for (auto h = std::sregex_iterator(head.begin(), head.end(), th); h != std::sregex_iterator();
       ++h) {
    out.push_back((*h)[1]);
  }
  return out;
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
