// edl-fake-kube: a fake Kubernetes cluster in one process for end-to-end
// tests: the API server (HTTPS, bearer token) over an in-memory store, a
// scheduler with node capacity and priority preemption, a kubelet that runs
// pod commands as local processes, and a kube-proxy for Service cluster IPs.
// SIGTERM/SIGINT kill every pod process and exit 0; pod processes also die
// with this process (PR_SET_PDEATHSIG).
#include <CLI/CLI.hpp>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>

#include "base/file.h"
#include "base/logging.h"
#include "base/signal_watcher.h"
#include "tests/fakekube/server/api_server.h"
#include "tests/fakekube/server/cluster_spec.h"
#include "tests/fakekube/server/job_controller.h"
#include "tests/fakekube/server/kube_proxy.h"
#include "tests/fakekube/server/kubeconfig.h"
#include "tests/fakekube/server/kubelet.h"
#include "tests/fakekube/server/scheduler.h"
#include "tests/fakekube/server/store.h"
#include "tests/fakekube/server/utilization.h"

namespace edl::fakekube {
namespace {

struct Flags {
  std::string dir;
  std::string host = "127.0.0.1";
  int port = 0;
  std::string nodes;
  std::vector<std::string> images;
  std::vector<std::string> priority_classes;
  int watch_timeout_s = 1800;
  int bookmark_interval_s = 60;
  size_t history_limit = 10000;
  std::string token;
  std::vector<std::string> users;
  std::string authorization_mode = "AlwaysAllow";
  bool plain_http = false;
  std::string log_level = "INFO";
  std::string utilization_csv;
  double utilization_interval_s = 0.5;
};

std::string RandomToken() {
  std::random_device device;
  std::string token = "fake-";
  const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int i = 0; i < 32; ++i) token += alphabet[device() % 36];
  return token;
}

// NAME=VALUE, both non-empty.
Result<std::pair<std::string, std::string>> SplitPair(const std::string& flag,
                                                      const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument(flag + " \"" + text + "\": expected NAME=VALUE");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Status Run(const Flags& flags) {
  std::mutex mu;
  std::condition_variable stopped_cv;
  bool stopped = false;
  SignalWatcher signals([&](int signo) {
    EDL_LOG(INFO) << "edl-fake-kube: signal " << signo << ", shutting down";
    std::lock_guard<std::mutex> lock(mu);
    stopped = true;
    stopped_cv.notify_all();
  });

  std::vector<NodeSpec> nodes = DefaultNodeSpecs();
  if (!flags.nodes.empty()) {
    EDL_ASSIGN_OR_RETURN(nodes, ParseNodeSpecs(flags.nodes));
  }
  std::map<std::string, std::string> images;
  for (const std::string& image : flags.images) {
    EDL_ASSIGN_OR_RETURN(auto pair, SplitPair("--image", image));
    if (!std::filesystem::is_directory(pair.second)) {
      return InvalidArgument("--image " + image + ": " + pair.second + " is not a directory");
    }
    images[pair.first] = std::filesystem::absolute(pair.second).string();
  }
  Store store(Store::Options{flags.history_limit});
  for (const NodeSpec& node : nodes) {
    ApiResult<Json> created = store.Create("nodes", "", NodeObject(node, "127.0.0.1"));
    if (!created.ok()) return Internal("creating node " + node.name + ": " + created.error.message);
  }
  for (const std::string& text : flags.priority_classes) {
    EDL_ASSIGN_OR_RETURN(auto pair, SplitPair("--priority_class", text));
    int64_t value = 0;
    try {
      size_t used = 0;
      value = std::stoll(pair.second, &used);
      if (used != pair.second.size()) throw std::invalid_argument(pair.second);
    } catch (const std::exception&) {
      return InvalidArgument("--priority_class " + text + ": VALUE must be an integer");
    }
    Json pc = {{"apiVersion", "scheduling.k8s.io/v1"},
               {"kind", "PriorityClass"},
               {"metadata", {{"name", pair.first}}},
               {"value", value},
               {"preemptionPolicy", "PreemptLowerPriority"}};
    ApiResult<Json> created = store.Create("priorityclasses", "", pc);
    if (!created.ok()) {
      return InvalidArgument("--priority_class " + text + ": " + created.error.message);
    }
  }

  const std::string token = flags.token.empty() ? RandomToken() : flags.token;
  std::map<std::string, std::string> user_tokens;  // user -> token
  for (const std::string& user : flags.users) {
    if (user.empty() || user.find('/') != std::string::npos || user_tokens.count(user)) {
      return InvalidArgument("--user \"" + user + "\": expected a new name without '/'");
    }
    user_tokens[user] = RandomToken();
  }
  if (flags.authorization_mode != "AlwaysAllow" && flags.authorization_mode != "RBAC") {
    return InvalidArgument("--authorization_mode " + flags.authorization_mode +
                           ": expected AlwaysAllow or RBAC");
  }
  const std::string service_account_key = RandomToken();
  ApiServer::Options api_options;
  api_options.host = flags.host;
  api_options.port = flags.port;
  api_options.token = token;
  for (const auto& [user, user_token] : user_tokens) api_options.user_tokens[user_token] = user;
  api_options.service_account_key = service_account_key;
  api_options.rbac = flags.authorization_mode == "RBAC";
  api_options.tls = !flags.plain_http;
  api_options.cert_dir = flags.dir;
  api_options.default_watch_timeout = std::chrono::seconds(flags.watch_timeout_s);
  api_options.bookmark_interval = std::chrono::seconds(flags.bookmark_interval_s);
  ApiServer api(store, api_options);
  EDL_RETURN_IF_ERROR(api.Start());

  Scheduler scheduler(store, Scheduler::Options{nodes});
  JobController jobs(store, JobController::Options{});
  Kubelet::Options kubelet_options;
  kubelet_options.nodes.clear();
  for (const NodeSpec& node : nodes) kubelet_options.nodes.push_back(node.name);
  kubelet_options.images = images;
  if (!flags.dir.empty()) {
    kubelet_options.root_dir = flags.dir + "/pods";
    kubelet_options.log_dir = flags.dir + "/logs";
  }
  kubelet_options.api_host = flags.host;
  kubelet_options.api_port = api.port();
  kubelet_options.service_account = {"", api.CaCertificatePem(), service_account_key};
  Kubelet kubelet(store, kubelet_options);
  KubeProxy proxy(store);
  api.SetProxyTarget([&proxy](const Json& object, int port) -> std::optional<std::string> {
    const bool is_pod = object.contains("spec") && object["spec"].contains("containers");
    if (!is_pod) return port > 0 ? proxy.Endpoint(object, port) : proxy.Endpoint(object, "");
    if (!object.contains("status") || !object["status"].contains("podIP")) return std::nullopt;
    int target = port;
    if (target <= 0) {
      for (const Json& container : object["spec"]["containers"]) {
        for (const Json& p : container.value("ports", Json::array())) {
          if (target <= 0) target = p.value("containerPort", 0);
        }
      }
    }
    if (target <= 0) target = 80;
    return object["status"]["podIP"].get<std::string>() + ":" + std::to_string(target);
  });
  EDL_RETURN_IF_ERROR(kubelet.Start());
  EDL_RETURN_IF_ERROR(proxy.Start());
  scheduler.Start();
  jobs.Start();
  std::unique_ptr<UtilizationRecorder> recorder;
  if (!flags.utilization_csv.empty()) {
    recorder = std::make_unique<UtilizationRecorder>(
        store, nodes, flags.utilization_csv,
        std::chrono::milliseconds(static_cast<int64_t>(flags.utilization_interval_s * 1000)));
    EDL_RETURN_IF_ERROR(recorder->Start());
  }

  const std::string scheme = flags.plain_http ? "http://" : "https://";
  const std::string address = scheme + flags.host + ":" + std::to_string(api.port());
  if (!flags.dir.empty()) {
    std::filesystem::create_directories(flags.dir);
    EDL_RETURN_IF_ERROR(WriteFileAtomically(flags.dir + "/token", token));
    EDL_RETURN_IF_ERROR(WriteFileAtomically(flags.dir + "/address", address + "\n"));
    if (!flags.plain_http) {
      EDL_RETURN_IF_ERROR(WriteFileAtomically(flags.dir + "/ca.crt", api.CaCertificatePem()));
    }
    for (const auto& [user, user_token] : user_tokens) {
      EDL_RETURN_IF_ERROR(WriteFileAtomically(
          flags.dir + "/" + user + ".kubeconfig",
          KubeconfigYaml(scheme + (flags.host == "0.0.0.0" ? "127.0.0.1" : flags.host) + ":" +
                             std::to_string(api.port()),
                         flags.plain_http ? "" : api.CaCertificatePem(), user_token)));
    }
    // Last: its existence tells a waiting test that everything is up.
    EDL_RETURN_IF_ERROR(WriteFileAtomically(flags.dir + "/kubeconfig", api.Kubeconfig()));
  }
  EDL_LOG(INFO) << "edl-fake-kube: serving " << address << " with " << nodes.size() << " node(s)"
                << (flags.dir.empty() ? "" : "; kubeconfig in " + flags.dir);

  {
    std::unique_lock<std::mutex> lock(mu);
    stopped_cv.wait(lock, [&] { return stopped; });
  }
  if (recorder) recorder->Stop();
  scheduler.Stop();
  kubelet.Stop();  // kills every pod process
  proxy.Stop();
  api.Stop();
  return Status::Ok();
}

}  // namespace
}  // namespace edl::fakekube

int main(int argc, char** argv) {
  edl::fakekube::Flags flags;
  CLI::App app{
      "edl-fake-kube: a fake Kubernetes cluster in one process (API server, scheduler, "
      "kubelet running pods as local processes, kube-proxy), for end-to-end tests."};
  app.add_option("--dir", flags.dir,
                 "Directory for kubeconfig, ca.crt, token and address (written once the "
                 "cluster is up; kubeconfig last), pod directories (pods/) and pod logs "
                 "(logs/). Logs of the fake itself go to stderr.");
  app.add_option("--host", flags.host, "Address the API server listens on")->capture_default_str();
  app.add_option("--port", flags.port, "API server port; 0 picks a free one (see DIR/address)")
      ->capture_default_str();
  app.add_option("--nodes", flags.nodes,
                 "Fake nodes and their capacity: "
                 "\"node-a:cpu=4,memory=8Gi,nvidia.com/gpu=1;node-b:cpu=2,memory=4Gi\" "
                 "(default: one node node-0 with cpu=8,memory=32Gi)");
  app.add_option("--image", flags.images,
                 "NAME=DIR (repeatable): pods with image NAME (or NAME:tag) run with DIR "
                 "prepended to PATH; other images stay Pending with ErrImagePull");
  app.add_option("--priority_class", flags.priority_classes,
                 "NAME=VALUE (repeatable): PriorityClasses created at start");
  app.add_option("--watch_timeout_s", flags.watch_timeout_s,
                 "Server-side watch timeout when the client gives no timeoutSeconds")
      ->capture_default_str();
  app.add_option("--bookmark_interval_s", flags.bookmark_interval_s,
                 "Seconds between BOOKMARK events on watches that ask for them")
      ->capture_default_str();
  app.add_option("--history_limit", flags.history_limit,
                 "Watch events kept; a watch from an older resourceVersion gets 410 Expired")
      ->capture_default_str();
  app.add_option("--token", flags.token,
                 "The cluster admin's bearer token (default: random), in DIR/kubeconfig");
  app.add_option("--user", flags.users,
                 "NAME (repeatable): a user with a random token of its own, in "
                 "DIR/NAME.kubeconfig; under RBAC allowed only what RoleBindings grant it");
  app.add_option("--authorization_mode", flags.authorization_mode,
                 "AlwaysAllow: every authenticated request is allowed; RBAC: every identity but "
                 "the admin (users, and pods' service accounts, whose tokens the kubelet mounts) "
                 "is allowed what the Roles and RoleBindings in the store grant it")
      ->capture_default_str();
  app.add_flag("--plain_http", flags.plain_http,
               "Serve plain HTTP instead of HTTPS (kubectl then sends no token)");
  app.add_option("--log_level", flags.log_level, "DEBUG, INFO, WARNING or ERROR")
      ->capture_default_str();
  app.add_option("--utilization_csv", flags.utilization_csv,
                 "Record the allocated share of the nodes' CPU over time to this CSV (and "
                 "per job, by label edl-job, to the same name ending .jobs.csv)");
  app.add_option("--utilization_interval_s", flags.utilization_interval_s,
                 "Seconds between utilization samples")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  edl::LogLevel level;
  if (!edl::ParseLogLevel(flags.log_level, &level)) {
    std::cerr << "edl-fake-kube: --log_level " << flags.log_level
              << ": expected DEBUG, INFO, WARNING or ERROR\n";
    return 2;
  }
  edl::SetLogLevel(level);
  edl::Status status = edl::fakekube::Run(flags);
  if (!status.ok()) {
    std::cerr << "edl-fake-kube: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
