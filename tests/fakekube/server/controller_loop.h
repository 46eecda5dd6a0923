// ControllerLoop: the thread of one of the fake cluster's controllers
// (Scheduler, Kubelet, JobController). Once started it runs the
// controller's reconcile pass on its own thread: at once, after Store
// events on the resources it watches, and at least every resync period
// (a safety net, or the clock of a back-off). Events that arrive during a
// pass coalesce into one more pass. Passes on this thread never overlap;
// reconcile must serialize itself against passes the controller runs on
// other threads (RunOnce() in tests).
//
// Thread-safe. The Store must outlive the loop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class ControllerLoop {
 public:
  struct Options {
    std::string name;                    // the controller, for messages
    std::vector<std::string> resources;  // events on these wake the loop
    std::chrono::milliseconds resync{5000};
  };
  ControllerLoop(Store& store, Options options, std::function<void()> reconcile);
  ~ControllerLoop();  // Stop()s
  ControllerLoop(const ControllerLoop&) = delete;
  ControllerLoop& operator=(const ControllerLoop&) = delete;

  // Subscribes to the store and starts the thread, whose first pass runs
  // at once. REQUIRES: never started before (a second Start aborts).
  void Start();
  // Unsubscribes and joins the thread once its pass in progress is done.
  // True if this call stopped the loop; false if it was never started or
  // is already stopped. Idempotent.
  bool Stop();
  // Asks for one more pass; callable from any thread, reconcile included.
  void Wake();

 private:
  void Run();

  Store& store_;
  const Options options_;
  const std::function<void()> reconcile_;

  std::mutex mu_;  // guards dirty_, stop_, started_
  std::condition_variable cv_;
  bool dirty_ = true;  // a pass is due
  bool stop_ = false;
  bool started_ = false;
  uint64_t subscription_ = 0;
  std::thread thread_;
};

}  // namespace edl::fakekube
