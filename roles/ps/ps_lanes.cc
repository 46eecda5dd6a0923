#include "roles/ps/ps_lanes.h"

#include <string>
#include <utility>

namespace edl::roles::ps {

PsLanes::PsLanes(int n) {
  EDL_CHECK(n > 0) << "PsLanes needs at least one lane";
  for (int i = 0; i < n; ++i) {
    auto lane = std::make_unique<Lane>();
    lane->thread = std::thread(&PsLanes::Loop, lane.get());
    lanes_.push_back(std::move(lane));
  }
}

PsLanes::~PsLanes() {
  for (auto& lane : lanes_) {
    {
      std::lock_guard<std::mutex> lock(lane->mu);
      lane->done = true;
    }
    lane->cv.notify_one();
  }
  for (auto& lane : lanes_) lane->thread.join();
}

void PsLanes::Submit(int i, std::function<void()> fn) {
  EDL_CHECK(i >= 0 && i < size()) << "no lane " << i;
  Lane& lane = *lanes_[i];
  {
    std::lock_guard<std::mutex> lock(lane.mu);
    lane.queue.push_back(std::move(fn));
  }
  lane.cv.notify_one();
}

void PsLanes::Loop(Lane* lane) {
  std::unique_lock<std::mutex> lock(lane->mu);
  for (;;) {
    lane->cv.wait(lock, [&] { return lane->done || !lane->queue.empty(); });
    if (lane->queue.empty()) return;  // done, and nothing left to run
    std::function<void()> fn = std::move(lane->queue.front());
    lane->queue.pop_front();
    lock.unlock();
    fn();
    lock.lock();
  }
}

void PsCalls::Start(PsLanes& lanes, std::function<Status(int)> fn) {
  const int n = static_cast<int>(status_.size());
  EDL_CHECK(lanes.size() >= n) << n << " calls on " << lanes.size() << " lanes";
  auto shared = std::make_shared<std::function<Status(int)>>(std::move(fn));
  for (int i = 0; i < n; ++i) {
    lanes.Submit(i, [this, shared, i] {
      Status s = (*shared)(i);
      std::lock_guard<std::mutex> lock(mu_);
      status_[i] = std::move(s);
      if (--pending_ == 0) cv_.notify_all();
    });
  }
}

Status PsCalls::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return pending_ == 0; });
  for (size_t i = 0; i < status_.size(); ++i) {
    if (!status_[i].ok()) return status_[i].WithPrefix("PS " + std::to_string(i));
  }
  return Status::Ok();
}

}  // namespace edl::roles::ps
