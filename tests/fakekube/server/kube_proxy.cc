// KubeProxy: an acceptor per Service port, a coroutine per connection that
// splices bytes both ways, half-closes like TCP does, and ends both sides
// on an error.
#include "tests/fakekube/server/kube_proxy.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <map>
#include <mutex>
#include <thread>

#include "base/logging.h"
#include "tests/fakekube/server/pod_conditions.h"

namespace edl::fakekube {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using namespace asio::experimental::awaitable_operators;

std::string Field(const Json& object, const char* a, const char* b) {
  if (!object.contains(a) || !object[a].is_object() || !object[a].contains(b) ||
      !object[a][b].is_string()) {
    return "";
  }
  return object[a][b].get<std::string>();
}

bool PodReady(const Json& pod) {
  if (PodPhase(pod) != "Running" || IsDeleting(pod) || Field(pod, "status", "podIP").empty()) {
    return false;
  }
  const Json* ready = FindPodCondition(pod, "Ready");
  return ready && ready->value("status", std::string()) == "True";
}

// The container port a Service targetPort names (a number, or a port name).
std::optional<int> TargetPort(const Json& pod, const Json& target) {
  if (target.is_number_integer()) return target.get<int>();
  if (target.is_string()) {
    const std::string name = target.get<std::string>();
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) {
      return std::stoi(name);
    }
    for (const Json& container : pod["spec"].value("containers", Json::array())) {
      for (const Json& port : container.value("ports", Json::array())) {
        if (port.value("name", std::string()) == name && port.contains("containerPort")) {
          return port["containerPort"].get<int>();
        }
      }
    }
  }
  return std::nullopt;
}

asio::awaitable<void> Copy(tcp::socket& from, tcp::socket& to) {
  char buffer[16384];
  for (;;) {
    error_code ec;
    size_t n = co_await from.async_read_some(asio::buffer(buffer),
                                             asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::eof) {
      to.shutdown(tcp::socket::shutdown_send, ec);
      co_return;
    }
    if (!ec) {
      co_await asio::async_write(to, asio::buffer(buffer, n),
                                 asio::redirect_error(asio::use_awaitable, ec));
    }
    if (ec) {  // a reset or a closed socket: end both directions
      from.close(ec);
      to.close(ec);
      co_return;
    }
  }
}

}  // namespace

struct KubeProxy::Impl {
  explicit Impl(Store& s) : store(s) {}

  struct Listener {
    std::string ns, name;
    int port = 0;
    std::unique_ptr<tcp::acceptor> acceptor;
  };

  std::vector<std::string> Backends(const Json& service, const std::string& port);
  void Reconcile();
  asio::awaitable<void> Accept(tcp::acceptor* acceptor, std::string ns, std::string name, int port);
  asio::awaitable<void> Forward(tcp::socket client, std::string ns, std::string name, int port);

  Store& store;
  asio::io_context ioc;
  std::thread thread;
  uint64_t subscription = 0;
  std::atomic<bool> reconcile_posted{false};

  mutable std::mutex mu;  // guards started, stopped, listeners, round_robin
  bool started = false;
  bool stopped = false;
  std::map<std::string, Listener> listeners;         // "ip:port" →
  std::map<std::string, uint64_t> round_robin;       // "ns/name:port" → next
  std::map<std::string, std::string> bind_failures;  // "ip:port" → logged error
};

std::vector<std::string> KubeProxy::Impl::Backends(const Json& service, const std::string& port) {
  const std::string ns = Field(service, "metadata", "namespace");
  const std::string name = Field(service, "metadata", "name");
  if (!service.contains("spec")) return {};
  const Json& spec = service["spec"];
  const Json selector = spec.value("selector", Json::object());
  if (!selector.is_object() || selector.empty()) return {};
  if (!spec.contains("ports") || !spec["ports"].is_array()) return {};
  const Json* chosen = nullptr;
  for (const Json& p : spec["ports"]) {
    bool match = port.empty() || std::to_string(p.value("port", 0)) == port ||
                 p.value("name", std::string()) == port;
    if (match) {
      chosen = &p;
      break;
    }
  }
  if (!chosen) return {};
  const Json target = chosen->contains("targetPort") ? (*chosen)["targetPort"] : (*chosen)["port"];
  std::string label_selector;
  for (const auto& [key, value] : selector.items()) {
    if (!value.is_string()) return {};
    label_selector += (label_selector.empty() ? "" : ",") + key + "=" + value.get<std::string>();
  }
  ApiResult<Store::ListResult> pods = store.List("pods", ns, label_selector, "");
  if (!pods.ok()) return {};
  std::vector<std::pair<std::string, std::string>> ready;  // (pod name, address)
  for (const Json& pod : pods.value->items) {
    if (!PodReady(pod)) continue;
    std::optional<int> target_port = TargetPort(pod, target);
    if (!target_port) continue;
    ready.emplace_back(Field(pod, "metadata", "name"),
                       Field(pod, "status", "podIP") + ":" + std::to_string(*target_port));
  }
  if (ready.empty()) return {};
  std::sort(ready.begin(), ready.end());
  uint64_t start;
  {
    std::lock_guard<std::mutex> lock(mu);
    start = round_robin[ns + "/" + name + ":" + std::to_string(chosen->value("port", 0))]++;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < ready.size(); ++i) {
    out.push_back(ready[(start + i) % ready.size()].second);
  }
  return out;
}

void KubeProxy::Impl::Reconcile() {
  reconcile_posted = false;
  ApiResult<Store::ListResult> services = store.List("services", "", "", "");
  if (!services.ok()) return;
  std::map<std::string, Listener> wanted;
  for (const Json& service : services.value->items) {
    const std::string ip = Field(service, "spec", "clusterIP");
    if (ip.empty() || ip == "None") continue;
    for (const Json& port : service["spec"].value("ports", Json::array())) {
      if (port.value("protocol", std::string("TCP")) != "TCP") continue;
      int number = port.value("port", 0);
      if (number <= 0) continue;
      Listener listener;
      listener.ns = Field(service, "metadata", "namespace");
      listener.name = Field(service, "metadata", "name");
      listener.port = number;
      wanted[ip + ":" + std::to_string(number)] = std::move(listener);
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  if (stopped) return;
  for (auto it = listeners.begin(); it != listeners.end();) {
    auto w = wanted.find(it->first);
    if (w != wanted.end() && w->second.ns == it->second.ns && w->second.name == it->second.name) {
      ++it;
      continue;
    }
    error_code ec;
    it->second.acceptor->close(ec);  // its accept loop ends with operation_aborted
    EDL_LOG(INFO) << "kube-proxy: stopped listening on " << it->first;
    it = listeners.erase(it);
  }
  for (auto& [key, listener] : wanted) {
    if (listeners.count(key)) continue;
    size_t colon = key.rfind(':');
    error_code ec;
    auto address = asio::ip::make_address(key.substr(0, colon), ec);
    auto acceptor = std::make_unique<tcp::acceptor>(ioc);
    if (!ec) acceptor->open(address.is_v4() ? tcp::v4() : tcp::v6(), ec);
    if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor->bind(tcp::endpoint(address, listener.port), ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      if (bind_failures[key] != ec.message()) {
        EDL_LOG(WARNING) << "kube-proxy: cannot listen on " << key << " for service " << listener.ns
                         << "/" << listener.name << ": " << ec.message();
        bind_failures[key] = ec.message();
      }
      continue;
    }
    bind_failures.erase(key);
    EDL_LOG(INFO) << "kube-proxy: listening on " << key << " for service " << listener.ns << "/"
                  << listener.name;
    listener.acceptor = std::move(acceptor);
    asio::co_spawn(ioc, Accept(listener.acceptor.get(), listener.ns, listener.name, listener.port),
                   asio::detached);
    listeners.emplace(key, std::move(listener));
  }
}

asio::awaitable<void> KubeProxy::Impl::Accept(tcp::acceptor* acceptor, std::string ns,
                                              std::string name, int port) {
  for (;;) {
    error_code ec;
    tcp::socket socket(ioc);
    co_await acceptor->async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      asio::steady_timer pause(ioc, std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    asio::co_spawn(ioc, Forward(std::move(socket), ns, name, port), asio::detached);
  }
}

asio::awaitable<void> KubeProxy::Impl::Forward(tcp::socket client, std::string ns, std::string name,
                                               int port) {
  ApiResult<Json> service = store.Get("services", ns, name);
  std::vector<std::string> backends;
  if (service.ok()) backends = Backends(*service.value, std::to_string(port));
  for (const std::string& backend : backends) {
    size_t colon = backend.rfind(':');
    error_code ec;
    tcp::endpoint endpoint(asio::ip::make_address(backend.substr(0, colon), ec),
                           static_cast<unsigned short>(std::stoi(backend.substr(colon + 1))));
    if (ec) continue;
    tcp::socket upstream(ioc);
    // A deadline on the connect: a pod that drops SYNs must not hang us.
    asio::steady_timer timer(ioc, std::chrono::seconds(2));
    timer.async_wait([&upstream](error_code timer_ec) {
      if (!timer_ec) {
        error_code ignored;
        upstream.close(ignored);
      }
    });
    co_await upstream.async_connect(endpoint, asio::redirect_error(asio::use_awaitable, ec));
    timer.cancel();
    if (ec || !upstream.is_open()) continue;
    upstream.set_option(tcp::no_delay(true), ec);
    client.set_option(tcp::no_delay(true), ec);
    co_await (Copy(client, upstream) && Copy(upstream, client));
    co_return;
  }
  EDL_LOG(DEBUG) << "kube-proxy: no ready endpoint for " << ns << "/" << name << ":" << port;
}

KubeProxy::KubeProxy(Store& store) : impl_(std::make_unique<Impl>(store)) {}

KubeProxy::~KubeProxy() { Stop(); }

Status KubeProxy::Start() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    EDL_CHECK(!impl_->started) << "KubeProxy started twice";
    impl_->started = true;
  }
  Impl* impl = impl_.get();
  impl_->subscription = impl_->store.Subscribe([impl](const WatchEvent& event) {
    if (event.resource != "services") return;
    if (impl->reconcile_posted.exchange(true)) return;
    asio::post(impl->ioc, [impl] { impl->Reconcile(); });
  });
  impl_->reconcile_posted = true;
  asio::post(impl_->ioc, [impl] { impl->Reconcile(); });
  impl_->thread = std::thread([impl] {
    auto guard = asio::make_work_guard(impl->ioc);
    impl->ioc.run();
  });
  return Status::Ok();
}

void KubeProxy::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->started || impl_->stopped) return;
    impl_->stopped = true;
  }
  impl_->store.Unsubscribe(impl_->subscription);
  impl_->ioc.stop();
  impl_->thread.join();
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->listeners.clear();
}

std::optional<std::string> KubeProxy::Endpoint(const Json& service, const std::string& port) {
  std::vector<std::string> backends = impl_->Backends(service, port);
  if (backends.empty()) return std::nullopt;
  return backends.front();
}

std::optional<std::string> KubeProxy::Endpoint(const Json& service, int port) {
  return Endpoint(service, std::to_string(port));
}

std::vector<std::string> KubeProxy::Listening() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<std::string> out;
  for (const auto& [key, listener] : impl_->listeners) out.push_back(key);
  return out;
}

}  // namespace edl::fakekube
