// ApiServer (api_server.h): starting, stopping and restarting the server,
// and the test hooks under /debug/fakekube/. The connections are served in
// api_server_connection.cc and api_server_streams.cc.
#include "tests/fakekube/server/api_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>

#include "base/logging.h"
#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/api_server_impl.h"
#include "tests/fakekube/server/kubeconfig.h"

namespace edl::fakekube {

void LogEscapedException(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    EDL_LOG(WARNING) << "fake kube api server: connection ended by exception: " << ex.what();
  } catch (...) {
    EDL_LOG(WARNING) << "fake kube api server: connection ended by an exception";
  }
}

ApiServer::ApiServer(Store& store, Options options)
    : impl_(std::make_unique<Impl>(store, std::move(options))) {}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Start() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  EDL_CHECK(!s.started && !s.stopped) << "ApiServer started twice";
  if (s.options.tls) {
    std::vector<std::string> names;
    if (s.options.host != "127.0.0.1" && s.options.host != "localhost") {
      names.push_back(s.options.host);
    }
    EDL_ASSIGN_OR_RETURN(s.certs, GenerateServerCertificates(names));
    if (!s.options.cert_dir.empty()) {
      EDL_RETURN_IF_ERROR(WriteCertificates(s.certs, s.options.cert_dir));
    }
    s.tls = std::make_unique<ssl::context>(ssl::context::tls_server);
    beast::error_code ec;
    s.tls->use_certificate_chain(asio::buffer(s.certs.server_cert_pem), ec);
    if (!ec) s.tls->use_private_key(asio::buffer(s.certs.server_key_pem), ssl::context::pem, ec);
    if (ec) return Internal("fake kube api server: loading its certificate: " + ec.message());
  }
  EDL_RETURN_IF_ERROR(s.ListenLocked(s.options.port));
  s.started = true;
  return Status::Ok();
}

Status ApiServer::Impl::ListenLocked(int listen_port) {
  const std::string name = options.host + ":" + std::to_string(listen_port);
  auto context = std::make_unique<asio::io_context>(4);
  beast::error_code ec;
  tcp::endpoint endpoint;
  asio::ip::address address = asio::ip::make_address(options.host, ec);
  if (!ec) {
    endpoint = tcp::endpoint(address, static_cast<uint16_t>(listen_port));
  } else {
    tcp::resolver resolver(*context);
    auto results = resolver.resolve(options.host, std::to_string(listen_port), ec);
    if (ec || results.empty()) return Unavailable(name + ": cannot resolve host: " + ec.message());
    endpoint = results.begin()->endpoint();
  }
  auto listener = std::make_unique<tcp::acceptor>(asio::make_strand(*context));
  if (listener->open(endpoint.protocol(), ec); ec) {
    return Unavailable(name + ": cannot open a socket: " + ec.message());
  }
  listener->set_option(asio::socket_base::reuse_address(true), ec);
  if (listener->bind(endpoint, ec); ec) return Unavailable(name + ": cannot bind: " + ec.message());
  if (listener->listen(asio::socket_base::max_listen_connections, ec); ec) {
    return Unavailable(name + ": cannot listen: " + ec.message());
  }
  port = listener->local_endpoint(ec).port();
  ioc = std::move(context);
  acceptor = std::move(listener);
  asio::co_spawn(acceptor->get_executor(), AcceptLoop(), LogEscapedException);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([context = ioc.get()] {
      for (;;) {
        try {
          context->run();
          return;
        } catch (const std::exception& e) {
          EDL_LOG(WARNING) << "fake kube api server: handler threw: " << e.what();
        }
      }
    });
  }
  return Status::Ok();
}

void ApiServer::Impl::HaltLocked() {
  if (!ioc) return;
  {
    // No watch may post to the io_context once it starts going away.
    std::lock_guard<std::mutex> lock(watches_mu);
    for (const auto& queue : watches) queue->Close();
  }
  ioc->stop();
  for (std::thread& t : threads) t.join();
  threads.clear();
  acceptor.reset();
  ioc.reset();  // destroys the suspended connection coroutines, closing their sockets
}

int ApiServer::port() const { return impl_->port.load(); }

void ApiServer::Stop() {
  Impl& s = *impl_;
  s.stopping = true;  // no restart begins after this
  std::thread restarter;
  {
    std::lock_guard<std::mutex> lock(s.control_mu);
    restarter = std::move(s.restarter);
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.started && !s.stopped) s.HaltLocked();
    s.stopped = true;
  }
  s.stopped_cv.notify_all();
  if (restarter.joinable()) restarter.join();
}

Status ApiServer::Impl::RestartLocked(std::unique_lock<std::mutex>& lock,
                                      std::chrono::milliseconds down) {
  if (stopped) return FailedPrecondition("the fake kube api server was stopped");
  EDL_LOG(INFO) << "fake kube api server: restarting; down for " << down.count() << " ms";
  HaltLocked();
  if (stopped_cv.wait_for(lock, down, [&] { return stopped; })) {
    return FailedPrecondition("the fake kube api server was stopped");
  }
  EDL_RETURN_IF_ERROR(ListenLocked(port.load()));
  ++restarts;
  EDL_LOG(INFO) << "fake kube api server: serving again on port " << port.load();
  return Status::Ok();
}

Status ApiServer::Restart(std::chrono::milliseconds down) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  EDL_CHECK(impl_->started) << "ApiServer::Restart before Start";
  return impl_->RestartLocked(lock, down);
}

size_t ApiServer::Impl::CutWatches() {
  std::lock_guard<std::mutex> lock(watches_mu);
  for (const auto& queue : watches) {
    std::lock_guard<std::mutex> queue_lock(queue->mu);
    queue->cut = true;
    queue->Wake();
  }
  EDL_LOG(INFO) << "fake kube api server: cutting " << watches.size() << " watch(es)";
  return watches.size();
}

size_t ApiServer::CutWatches() { return impl_->CutWatches(); }

void ApiServer::InjectFaults(const FaultPlan& plan) { impl_->faults.Set(plan); }

int64_t ApiServer::restarts() const { return impl_->restarts.load(); }

int64_t ApiServer::faults_injected() const { return impl_->faults.injected(); }

const AuditLog& ApiServer::audit() const { return impl_->audit; }

std::string ApiServer::Kubeconfig() const {
  const Impl& s = *impl_;
  const std::string host = s.options.host == "0.0.0.0" ? "127.0.0.1" : s.options.host;
  const std::string server = std::string(s.options.tls ? "https" : "http") + "://" + host + ":" +
                             std::to_string(s.port.load());
  return KubeconfigYaml(server, s.options.tls ? s.certs.ca_cert_pem : "", s.options.token);
}

size_t ApiServer::open_watches() const {
  std::lock_guard<std::mutex> lock(impl_->watches_mu);
  return impl_->watches.size();
}

ApiResponse ApiServer::Impl::Control(const ApiRequest& request, const ParsedTarget& target) {
  const std::string what = target.path.substr(std::string("/debug/fakekube/").size());
  if (what == "state" && request.method == "GET") {
    std::lock_guard<std::mutex> lock(control_mu);
    return JsonResponse(200, Json{{"restarts", restarts.load()},
                                  {"restarting", restarting},
                                  {"faults_injected", faults.injected()},
                                  {"watches", watches_count()}});
  }
  if (what == "audit" && request.method == "GET") {
    return JsonResponse(200, audit.ToEventList(QueryString(target, "user")));
  }
  if (request.method != "POST") return ErrorResponse(MethodNotAllowedError());
  if (what == "faults") {
    ApiResult<FaultPlan> plan = ParseFaultPlan(target);
    if (!plan.ok()) return ErrorResponse(plan.error);
    faults.Set(*plan.value);
    return JsonResponse(200, Json{{"code", plan.value->code}});
  }
  if (what == "cut-watches") return JsonResponse(200, Json{{"cut", CutWatches()}});
  if (what == "restart") {
    const std::chrono::milliseconds down(QueryInt(target, "down_ms").value_or(1000));
    std::lock_guard<std::mutex> lock(control_mu);
    if (restarting || stopping) {
      return ErrorResponse(ConflictError("restarts", "api", "a restart is under way"));
    }
    restarting = true;
    // This handler runs on a thread the restart joins: a thread of its
    // own does it, once this answer had a moment to leave.
    if (restarter.joinable()) restarter.join();
    restarter = std::thread([this, down] {
      {
        std::unique_lock<std::mutex> pause(mu);
        if (!stopped_cv.wait_for(pause, std::chrono::milliseconds(200), [&] { return stopped; })) {
          Status restarted = RestartLocked(pause, down);
          if (!restarted.ok()) {
            EDL_LOG(ERROR) << "fake kube api server: restart: " << restarted.message();
          }
        }
      }
      std::lock_guard<std::mutex> lock(control_mu);
      restarting = false;
    });
    return JsonResponse(202, Json{{"down_ms", down.count()}});
  }
  return ErrorResponse(PathNotFound());
}

std::string ApiServer::CaCertificatePem() const { return impl_->certs.ca_cert_pem; }

void ApiServer::SetProxyTarget(ProxyTarget target) {
  std::lock_guard<std::mutex> lock(impl_->control_mu);
  impl_->proxy_target = std::move(target);
}

}  // namespace edl::fakekube