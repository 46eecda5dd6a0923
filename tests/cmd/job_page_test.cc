// The job page of a running distributed job: `edl dashboard` prints its URL,
// the master serves the page without the secret but its data only with it,
// and headless Chromium (Debian's chromium) running the page's scripts shows
// the job's state, curves, workers, ledger values and an incident (a worker
// killed), cell by cell against the master's /status.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "net/rpc.h"
#include "tests/testing/html_table.h"
#include "tests/testing/job_report.h"
#include "tests/testing/run_edl.h"
#include "tests/testing/skip.h"

namespace edl::testing {
namespace {

const std::string kData = EDL_FASHION_MNIST;

// Runs a shell command, returning its exit code and stdout.
int Shell(const std::string& command, std::string* out) {
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return ::pclose(p);
}

// A count as the page writes it ("59,488"); -1 when it is none.
int64_t Count(std::string text) {
  std::erase(text, ',');
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(text);
}

// The number in `attr="N"` of the first chart with data-tag `tag`, or -1.
int ChartPoints(const std::string& dom, const std::string& tag) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("data-tag=\"" + tag + "\" data-points=\"([0-9]+)\""))) {
    return -1;
  }
  return std::stoi(m[1]);
}

TEST(JobPage, ServesTheRunningJobToABrowserAndItsDataOnlyWithTheSecret) {
  TempDir dir;
  EdlProcess job(
      {"train", "--distribution_strategy=ParameterServerStrategy", "--job_name=page",
       "--jobs_dir=" + dir.path(), "--grace_period=5", "--model_def=zoo:fashion_mnist_mlp",
       "--training_data=" + kData + "/train-images-idx3-ubyte.gz",
       "--validation_data=" + kData + "/t10k-images-idx3-ubyte.gz", "--evaluation_steps=100",
       "--num_epochs=50", "--num_workers=2", "--num_ps_pods=1"});
  ASSERT_TRUE(WaitFor([&] { return Version(JobStatus(dir.path(), "page")) >= 1; }, 90))
      << job.Err();

  RunResult missing = RunEdl({"dashboard", "nosuchjob", "--jobs_dir=" + dir.path()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nosuchjob"), std::string::npos) << missing.err;

  RunResult d = RunEdl({"dashboard", "page", "--jobs_dir=" + dir.path()});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(d.out, m, std::regex(R"(http://([0-9.]+):([0-9]+)/#token=([0-9a-f]+))")))
      << d.out;
  const std::string url = m[0], host = m[1], token = m[3];
  const int port = std::stoi(m[2]);
  // Enough to draw: two points of the training loss (the master records it
  // at most once a second) and of the validation accuracy.
  net::RpcChannel owner(host, port, token);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto series = owner.Get("/series", net::Millis(10000));
        if (!series.ok()) return false;
        nlohmann::json j = nlohmann::json::parse(*series, nullptr, false);
        if (!j.is_object() || !j.contains("series")) return false;
        const nlohmann::json& s = j["series"];
        return s.contains("train/loss") && s["train/loss"].size() >= 2 &&
               s.contains("validation/accuracy") && s["validation/accuracy"].size() >= 2;
      },
      90))
      << job.Err();

  // The page is public; the data behind it and unknown paths need the secret.
  const net::Millis deadline(10000);
  net::RpcChannel stranger(host, port, "not-the-secret");
  auto page = stranger.Get("/", deadline);
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_NE(page->find("<title>edl job</title>"), std::string::npos);
  EXPECT_FALSE(stranger.Get("/status", deadline).ok());
  EXPECT_FALSE(stranger.Get("/series", deadline).ok());
  EXPECT_FALSE(stranger.Get("/../" + dir.path() + "/page/secret", deadline).ok());
  EXPECT_TRUE(owner.Get("/series", deadline).ok());
  auto traversal = owner.Get("/../../etc/passwd", deadline);
  ASSERT_FALSE(traversal.ok());
  EXPECT_NE(traversal.status().message().find("no handler"), std::string::npos)
      << traversal.status().message();

  // An incident for the page to show: worker-1 killed; wait until the
  // master has recorded it and its replacement trains.
  nlohmann::json before = JobStatus(dir.path(), "page");
  int victim = -1;
  for (const auto& w : before.value("workers", nlohmann::json::array())) {
    if (w.value("name", "") == "worker-1") victim = w.value("pid", -1);
  }
  ASSERT_GT(victim, 0) << before.dump();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        before = JobStatus(dir.path(), "page");
        if (!before.is_object() || before.value("incidents", nlohmann::json::array()).empty()) {
          return false;
        }
        return !before["incidents"][0]["to_step_s"].is_null();
      },
      90))
      << before.dump() << job.Err();

  // Headless Chromium runs the page's scripts against the live job.
  std::string version;
  if (Shell("chromium --version 2>/dev/null", &version) != 0) {
    EDL_SKIP_OR_FAIL_IN_CI("chromium is not installed (Debian package chromium)");
  }
  std::string dom;
  // --virtual-time-budget lets the page's requests and timers run before
  // the DOM is dumped; as root, Chromium needs --no-sandbox.
  const std::string chromium =
      "chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--virtual-time-budget=8000 ";
  ASSERT_EQ(Shell(chromium + "--dump-dom '" + url + "' 2>/dev/null", &dom), 0);
  const nlohmann::json after = JobStatus(dir.path(), "page");
  ASSERT_TRUE(after.is_object());
  const nlohmann::json ledger_before = before.value("ledger", nlohmann::json::array());
  const nlohmann::json ledger_after = after.value("ledger", nlohmann::json::array());
  EXPECT_NE(dom.find("data-loaded=\"true\""), std::string::npos) << dom;
  EXPECT_NE(dom.find(">edl job page</h1>"), std::string::npos);
  EXPECT_NE(dom.find("class=\"badge running\">running<"), std::string::npos);
  EXPECT_NE(dom.find("ParameterServerStrategy"), std::string::npos);
  EXPECT_GE(ChartPoints(dom, "train/loss"), 2) << dom;
  EXPECT_GE(ChartPoints(dom, "validation/accuracy"), 2) << dom;
  EXPECT_GE(ChartPoints(dom, "train/samples_per_second"), 1) << dom;
  EXPECT_NE(dom.find("<td>worker-0</td>"), std::string::npos);
  EXPECT_NE(dom.find("<td>worker-1</td>"), std::string::npos);
  EXPECT_NE(dom.find("<td>ps-0</td>"), std::string::npos);
  // The ledger as the master counts it: each started epoch's row with its
  // records, and the records trained somewhere between the status read
  // before the page loaded and the one after; pending is what is left.
  const auto ledger = HtmlTableRows(dom, "ledger");
  ASSERT_FALSE(ledger.empty()) << dom;
  for (const HtmlRow& row : ledger) {
    const int epoch = std::stoi(HtmlCell(row, "epoch"));
    ASSERT_GE(epoch, 1) << dom;
    ASSERT_LE(static_cast<size_t>(epoch), ledger_after.size()) << after.dump();
    // An epoch started after the first read had trained nothing then.
    const int64_t trained_before = static_cast<size_t>(epoch) <= ledger_before.size()
                                       ? ledger_before[epoch - 1].value("trained", int64_t{0})
                                       : 0;
    const int64_t trained_after = ledger_after[epoch - 1].value("trained", int64_t{0});
    EXPECT_EQ(HtmlCell(row, "records"), "60,000");
    const int64_t trained = Count(HtmlCell(row, "trained"));
    EXPECT_GE(trained, trained_before) << HtmlCell(row, "trained");
    EXPECT_LE(trained, trained_after) << HtmlCell(row, "trained");
    EXPECT_EQ(trained + Count(HtmlCell(row, "pending")) + Count(HtmlCell(row, "missing")), 60000)
        << "epoch " << epoch;
    EXPECT_EQ(HtmlCell(row, "missing"), "0");
    EXPECT_GE(Count(HtmlCell(row, "record trainings")), trained);
  }
  // The incident: the worker killed, the cause the master gave, the work
  // it put back, and every stage's time, the replacement's first step too.
  const auto incidents = HtmlTableRows(dom, "incidents");
  ASSERT_EQ(incidents.size(), 1u) << dom;
  ASSERT_EQ(after.value("incidents", nlohmann::json::array()).size(), 1u) << after.dump();
  const nlohmann::json& incident = after["incidents"][0];
  EXPECT_EQ(HtmlCell(incidents[0], "worker"), "worker-1");
  EXPECT_EQ(HtmlCell(incidents[0], "cause"), incident.value("cause", "?"));
  EXPECT_FALSE(HtmlCell(incidents[0], "cause").empty());
  EXPECT_EQ(Count(HtmlCell(incidents[0], "tasks put back")),
            incident.value("tasks_put_back", int64_t{-1}));
  EXPECT_EQ(Count(HtmlCell(incidents[0], "records put back")),
            incident.value("records_put_back", int64_t{-1}));
  for (const char* stage : {"detection s", "pending s", "to first step s"}) {
    EXPECT_GE(std::stod(HtmlCell(incidents[0], stage)), 0) << stage << ": " << dom;
  }
  EXPECT_NE(dom.find("records/s, ETA "), std::string::npos);
  EXPECT_NE(dom.find("<p id=\"error\"></p>"), std::string::npos);  // no error shown
  // EDL_JOB_PAGE_SCREENSHOT=file.png also saves what the page looks like
  // (docs/job-page.png was made so).
  if (const char* shot = std::getenv("EDL_JOB_PAGE_SCREENSHOT")) {
    std::string ignored;
    EXPECT_EQ(Shell(chromium + "--window-size=1280,1300 --screenshot='" + std::string(shot) +
                        "' '" + url + "' 2>/dev/null",
                    &ignored),
              0);
  }

  RunResult stop = RunEdl({"stop", "page", "--jobs_dir=" + dir.path()});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  job.Wait();
}

}  // namespace
}  // namespace edl::testing
