// SignalWatcher: turns SIGTERM / SIGINT into a callback on an ordinary
// thread (so the callback may take locks and log), for graceful shutdown on a
// preemption notice. Construct it in main() before starting other threads:
// it blocks the signals in the calling thread, which new threads inherit, and
// a watcher thread waits for them with sigwait. The destructor stops and
// joins the watcher. One per process.
#pragma once

#include <functional>
#include <thread>

namespace edl {

class SignalWatcher {
 public:
  // `on_signal(signo)` runs on the watcher thread for every SIGTERM/SIGINT.
  explicit SignalWatcher(std::function<void(int)> on_signal);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::function<void(int)> on_signal_;
  std::thread thread_;
};

}  // namespace edl
