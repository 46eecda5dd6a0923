// ControllerLoop: waits for a wake or the resync period, then runs a pass.
#include "tests/fakekube/server/controller_loop.h"

#include <algorithm>

#include "base/logging.h"

namespace edl::fakekube {

ControllerLoop::ControllerLoop(Store& store, Options options, std::function<void()> reconcile)
    : store_(store), options_(std::move(options)), reconcile_(std::move(reconcile)) {}

ControllerLoop::~ControllerLoop() { Stop(); }

void ControllerLoop::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  EDL_CHECK(!started_) << options_.name << " started twice";
  started_ = true;
  subscription_ = store_.Subscribe([this](const WatchEvent& event) {
    const std::vector<std::string>& watched = options_.resources;
    if (std::find(watched.begin(), watched.end(), event.resource) != watched.end()) Wake();
  });
  thread_ = std::thread([this] { Run(); });
}

bool ControllerLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_ || stop_) return false;
    stop_ = true;
  }
  store_.Unsubscribe(subscription_);
  cv_.notify_all();
  thread_.join();
  return true;
}

void ControllerLoop::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;
  }
  cv_.notify_all();
}

void ControllerLoop::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.resync, [this] { return dirty_ || stop_; });
    if (stop_) break;
    dirty_ = false;
    lock.unlock();
    reconcile_();
    lock.lock();
  }
}

}  // namespace edl::fakekube
