// Job control: edl status, stop, scale, logs, list, dashboard and wait, for
// a local job (through its job directory) or one on Kubernetes (through the
// API server).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/file.h"
#include "cmd/commands.h"
#include "cmd/kube_flags.h"
#include "net/rpc.h"
#include "roles/job/kube_job.h"
#include "roles/job_dir.h"

namespace edl::cmd {
namespace {

// Where local jobs keep their directories: $XDG_RUNTIME_DIR/edl, else
// /tmp/edl-<uid>.
std::string DefaultJobsRoot() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg && *xdg) return std::string(xdg) + "/edl";
  return "/tmp/edl-" + std::to_string(::getuid());
}

// A channel to a running job's master, found through its job directory.
Result<std::unique_ptr<net::RpcChannel>> ConnectToJob(const std::string& root,
                                                      const std::string& job) {
  EDL_ASSIGN_OR_RETURN(roles::JobDirectory dir, roles::FindJobDirectory(root, job));
  EDL_ASSIGN_OR_RETURN(std::string secret, roles::ReadSecret(dir));
  EDL_ASSIGN_OR_RETURN(roles::MasterAddress a, roles::ReadMasterAddress(dir));
  return std::make_unique<net::RpcChannel>(a.host, a.port, secret);
}

// edl dashboard JOB for a local job: the page's URL, its secret in the
// fragment (which the browser keeps to itself and the page sends as a bearer
// token), once the master answers.
int PrintLocalDashboard(const std::string& root, const std::string& job) {
  auto dir = roles::FindJobDirectory(root, job);
  if (!dir.ok()) return Fail(dir.status().message());
  auto secret = roles::ReadSecret(*dir);
  if (!secret.ok()) return Fail(secret.status().message());
  auto a = roles::ReadMasterAddress(*dir);
  if (!a.ok()) return Fail(a.status().message());
  net::RpcChannel channel(a->host, a->port, *secret);
  auto r = channel.Get("/status", net::Millis(10000));
  if (!r.ok()) return Fail("job " + job + ": " + r.status().message());
  std::printf("http://%s:%d/#token=%s\n", a->host.c_str(), a->port, secret->c_str());
  return 0;
}

// edl wait JOB for a local job: the exit code the job's `edl train`
// recorded in outcome.json when the job ended; 124 after `timeout_s`; 1 when
// the job's processes are gone without an outcome (its `edl train` killed).
int WaitForLocalJob(const std::string& root, const std::string& job, double timeout_s) {
  auto dir = roles::FindJobDirectory(root, job);
  if (!dir.ok()) return Fail(dir.status().message());
  const auto start = std::chrono::steady_clock::now();
  int gone_checks = 0;  // consecutive checks that found no live master
  while (true) {
    if (Result<std::string> text = ReadFile(dir->OutcomePath()); text.ok()) {
      nlohmann::json o = nlohmann::json::parse(*text, nullptr, false);
      if (o.is_object() && o.contains("exit_code") && o["exit_code"].is_number_integer()) {
        const int code = o["exit_code"].get<int>();
        std::printf("job %s: %s (exit code %d)\n", job.c_str(), code == 0 ? "succeeded" : "failed",
                    code);
        return code;
      }
      return Fail("job " + job + ": " + dir->OutcomePath() + " is not a job outcome");
    }
    // No outcome yet: the job runs while its master (or, between masters,
    // its host restarting one) lives.
    auto a = roles::ReadMasterAddress(*dir);
    const bool alive =
        a.ok() && a->pid > 0 && (::kill(static_cast<pid_t>(a->pid), 0) == 0 || errno == EPERM);
    gone_checks = alive ? 0 : gone_checks + 1;
    if (gone_checks >= 20) {
      return Fail("job " + job +
                  ": its processes are gone and it recorded no outcome (was its "
                  "`edl train` killed?)");
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout_s > 0 && waited >= timeout_s) {
      std::fprintf(stderr, "edl: job %s still running after %.0f s\n", job.c_str(), timeout_s);
      return 124;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // polling the job directory
  }
}

// The status JSON as one line per field: scalars as `key: value`, objects
// flattened (`tasks.training.done: 3`), arrays of objects one line per element
// (`workers[0]: name=worker-0 pid=42 …`, nested values as compact JSON).
void AppendText(const std::string& key, const nlohmann::json& v, std::string* out) {
  if (v.is_object()) {
    if (v.empty()) *out += key + ":\n";
    for (auto it = v.begin(); it != v.end(); ++it)
      AppendText(key + "." + it.key(), it.value(), out);
    return;
  }
  if (v.is_array()) {
    if (v.empty()) *out += key + ":\n";
    for (size_t i = 0; i < v.size(); ++i) {
      const nlohmann::json& e = v[i];
      std::string line = key + "[" + std::to_string(i) + "]:";
      if (e.is_object()) {
        for (auto it = e.begin(); it != e.end(); ++it) {
          line += " " + it.key() + "=" +
                  (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
        }
      } else {
        line += " " + (e.is_string() ? e.get<std::string>() : e.dump());
      }
      *out += line + "\n";
    }
    return;
  }
  *out += key + ": " + (v.is_string() ? v.get<std::string>() : v.dump()) + "\n";
}

}  // namespace

std::string StatusText(const nlohmann::json& status) {
  std::string out;
  for (auto it = status.begin(); it != status.end(); ++it) AppendText(it.key(), it.value(), &out);
  return out;
}

std::string JobsRootFlagDefault() { return DefaultJobsRoot(); }

Runner AddControlCommands(CLI::App& parent) {
  struct State {
    std::string job;
    std::string root = DefaultJobsRoot();
    int num_workers = 0;
    int num_ps = -1;  // given only to be refused
    std::string cluster = "local";
    roles::job::KubeJobOptions kube;
    std::string process;
    bool follow = false;
    int port = 0;
    std::string format = "json";
    double timeout_s = 0;
  };
  auto s = std::make_shared<State>();
  CLI::App* status = parent.add_subcommand("status", "Show a running job's status");
  CLI::App* stop = parent.add_subcommand("stop", "Stop a running job");
  CLI::App* scale = parent.add_subcommand("scale", "Change a running job's worker count");
  CLI::App* logs = parent.add_subcommand("logs",
                                         "Print the log of a job on Kubernetes (its "
                                         "master's, or one process's)");
  CLI::App* list = parent.add_subcommand("list", "List the edl jobs of a Kubernetes namespace");
  CLI::App* dashboard = parent.add_subcommand(
      "dashboard",
      "Print the URL of a running job's live page (progress, curves, workers, data ledger, "
      "incidents); on Kubernetes, serve it on a local port relayed through the API server");
  CLI::App* wait = parent.add_subcommand(
      "wait", "Wait until a job ends and exit with its exit code (0: it succeeded), for scripts");
  for (CLI::App* app : {status, stop, scale, logs, list, dashboard, wait}) {
    if (app != list) app->add_option("JOB", s->job, "The job's --job_name")->required();
    app->add_option("--jobs_dir", s->root, "Where local jobs keep their directories")
        ->capture_default_str();
    app->add_option("--cluster", s->cluster, "Where the job runs: local or kube")
        ->check(CLI::IsMember({"local", "kube"}))
        ->capture_default_str();
    AddKubeAccessFlags(*app, s->kube);
  }
  scale
      ->add_option("--num_workers", s->num_workers,
                   "The new number of workers (1..1000): more start at once, the newest "
                   "leave after handing back their tasks")
      ->check(CLI::Range(1, 1000));
  scale->add_option("--num_ps_pods", s->num_ps,
                    "Refused: a running job's parameter servers hold its model in shards, "
                    "which edl does not re-shard; stop the job and resubmit it from its "
                    "checkpoint with the new count");
  logs->add_option("--process", s->process,
                   "Whose log: master (default), ps-N or worker-N (its newest pod)");
  logs->add_flag("-f,--follow", s->follow, "Keep streaming until the pod ends");
  dashboard
      ->add_option("--port", s->port,
                   "With --cluster=kube: the local port to serve the page on (0: a free "
                   "one; the URL is printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  status
      ->add_option("--format", s->format,
                   "json (the master's status, indented) or text (one line per field: "
                   "`state: running`, `workers[0]: name=worker-0 pid=…`; for scripts)")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  wait->add_option("--timeout_s", s->timeout_s,
                   "Give up after this many seconds with exit code 124 (0: wait as long as "
                   "the job runs)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  return [s, status, stop, scale, logs, list, dashboard, wait]() {
    if (scale->parsed() && s->num_ps >= 0) {
      return Fail(
          "edl scale --num_ps_pods: a running job's parameter servers hold its model in "
          "shards, which edl does not re-shard; stop the job and resubmit it from its "
          "checkpoint (--checkpoint_dir_for_init) with --num_ps_pods=" +
          std::to_string(s->num_ps));
    }
    if (scale->parsed() && s->num_workers == 0) return Fail("edl scale: --num_workers is required");
    if (s->cluster == "kube") {
      Status st;
      if (status->parsed())
        st = roles::job::KubeJobStatus(s->kube, s->job, stdout);
      else if (stop->parsed())
        st = roles::job::KubeStopJob(s->kube, s->job, stdout);
      else if (logs->parsed())
        st = roles::job::KubeJobLogs(s->kube, s->job, s->process, s->follow, stdout);
      else if (list->parsed())
        st = roles::job::KubeListJobs(s->kube, stdout);
      else if (dashboard->parsed())
        st = roles::job::KubeDashboard(s->kube, s->job, s->port, stdout);
      else if (wait->parsed())
        st = roles::job::KubeWaitJob(s->kube, s->job, s->timeout_s, stdout);
      else
        st = roles::job::KubeScaleJob(s->kube, s->job, s->num_workers, stdout);
      if (st.code() == StatusCode::kDeadlineExceeded && wait->parsed()) {
        std::fprintf(stderr, "edl: %s\n", st.message().c_str());
        return 124;
      }
      if (!st.ok()) return Fail(st.message());
      return 0;
    }
    if (logs->parsed() || list->parsed()) {
      return Fail(std::string("edl ") + (logs->parsed() ? "logs" : "list") +
                  " works with --cluster=kube; a local job logs to the terminal that started it");
    }
    if (dashboard->parsed()) return PrintLocalDashboard(s->root, s->job);
    if (wait->parsed()) return WaitForLocalJob(s->root, s->job, s->timeout_s);
    auto channel = ConnectToJob(s->root, s->job);
    if (!channel.ok()) return Fail(channel.status().message());
    const net::Millis deadline(10000);
    if (status->parsed()) {
      auto r = (*channel)->Get("/status", deadline);
      if (!r.ok()) return Fail("job " + s->job + ": " + r.status().message());
      nlohmann::json j = nlohmann::json::parse(*r, nullptr, false);
      if (j.is_discarded()) return Fail("job " + s->job + ": the master's status is not JSON");
      std::printf("%s", s->format == "text" ? StatusText(j).c_str() : (j.dump(2) + "\n").c_str());
      return 0;
    }
    const std::string path = stop->parsed() ? "/edl.Control/Stop" : "/edl.Control/Scale";
    auto r =
        (*channel)->Call(path, scale->parsed() ? std::to_string(s->num_workers) : "", deadline);
    if (!r.ok()) return Fail("job " + s->job + ": " + r.status().message());
    std::printf("job %s: %s\n", s->job.c_str(), r->c_str());
    return 0;
  };
}

}  // namespace edl::cmd
