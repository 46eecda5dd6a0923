#include "base/signal_watcher.h"

#include <pthread.h>
#include <signal.h>

namespace edl {
namespace {
// Sent to the watcher thread by the destructor to end it.
constexpr int kStopSignal = SIGUSR2;
}  // namespace

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal)
    : on_signal_(std::move(on_signal)) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, kStopSignal);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this, set] {
    while (true) {
      int signo = 0;
      if (sigwait(&set, &signo) != 0) continue;
      if (signo == kStopSignal) return;
      on_signal_(signo);
    }
  });
}

SignalWatcher::~SignalWatcher() {
  pthread_kill(thread_.native_handle(), kStopSignal);
  thread_.join();
}

}  // namespace edl
