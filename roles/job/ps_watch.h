// PsWatch: the master's eye on its PS processes, on a thread of its own.
//
// Checkpoint health: with periodic checkpoints, every PS is asked every
// 2 s how they fare (kPsCheckpointHealthPath) and the core is told
// (MasterCore::OnCheckpointHealth: incidents, and the job's failure when
// none succeeds for too long).
//
// PS loss: notices a PS that came back as a new process (relaunched
// after a crash, or restarted while no master ran) and has the master's
// core train again, for that PS alone, the done training tasks whose
// updates it lost (docs/distributed.md, 'A PS loss').
//
// Each PS process has a random boot id (roles/job/ps_process.h,
// kPsAppliedPushesPath). The watch knows the boot id each PS had when it
// was last reconciled (kept in the master's plan, so a new master knows
// it too). A PS is asked again once at start and after each exit the
// supervisor reports, until it answers. A new boot id:
//   pass 1  MasterCore::RedoLostTasks with what the PS holds now;
//   pass 2  the same again once every training task leased at pass 1 has
//           been reported or handed back: a task whose pushes all reached
//           the lost process before it died, reported after pass 1, is
//           caught here;
// then the boot id is known. Until a PS is checked the job cannot end
// (MasterCore::HoldEnd). The first boot id a new job sees is taken
// as is (nothing was lost yet). Polls run on the watch's own thread, so a
// slow PS never stalls the master's loop.
// Internal to roles/job (master_job.cc).
#pragma once

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "roles/master/master_core.h"

namespace edl::roles::job {

class PsWatch {
 public:
  // `known_boots[i]`: PS i's boot id when last reconciled ("" = none yet).
  // `checkpoints`: the PS write periodic checkpoints (poll their health).
  PsWatch(master::MasterCore& core, std::vector<std::string> addresses, std::string secret,
          std::vector<std::string> known_boots, bool checkpoints);
  ~PsWatch();  // stops the thread
  PsWatch(const PsWatch&) = delete;
  PsWatch& operator=(const PsWatch&) = delete;

  // PS `i`'s process ended: ask the next one.
  void OnExit(int i);
  // The boot ids reconciled, for the plan; `changed` is set (and cleared
  // on read) when one changed since the last call.
  std::vector<std::string> KnownBoots(bool* changed);

 private:
  static std::string Name(size_t i);  // "ps-1"
  void Loop();
  // One poll of PS i; false while it does not answer.
  bool Check(int i);
  void PollCheckpoints();

  master::MasterCore& core_;
  const std::vector<std::string> addresses_;
  const std::string secret_;
  const bool checkpoints_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool changed_ = false;
  std::vector<std::string> known_;  // guarded by mu_
  std::vector<bool> ask_;           // guarded by mu_
  // Per PS, a boot id between pass 1 and pass 2, and the training tasks
  // leased at pass 1 (the watch thread's own).
  std::vector<std::string> pending_boot_;
  std::vector<std::set<int64_t>> pending_tasks_;
  std::thread thread_;
};

}  // namespace edl::roles::job
