// master_bench: the master's core in-process (no network), on the real clock.
//  1. Dispatch rate: 1,000 registered simulated workers, 1,000,000 training
//     tasks (1 record each); workers in round-robin call GetTask then
//     ReportTask(ok). Tasks/s with 1 and 2 calling threads, and the memory
//     growth (VmRSS once the epoch's tasks exist, VmHWM after the run) per
//     million tasks.
//  2. Recovery time: worker A holds every task; B gets one of them
//     (a) right after OnWorkerExit("A") (the cluster saw the process end), and
//     (b) after A falls silent, with heartbeat_timeout 2 s, Tick() every 10 ms
//     on its own thread and B polling GetTask every 10 ms.
//  3. The journal (roles/master/journal.h) a restartable master will keep:
//     T threads each append a 48-byte record (what a task report would
//     journal) and wait until it is durable, as a reporting worker's RPC
//     would; records/s, fsyncs, write calls and bytes per record, T = 1, 8, 64, 512, with
//     fsync and without. JOURNAL_DIR says where (default ./journal_bench.tmp:
//     on tmpfs fsync costs nothing, so measure on the disk the job uses).
//  4. Dispatch as in 1 with the master's journal on (MasterOptions::state_dir
//     in JOURNAL_DIR), every answer taken once WhenDurable says the change is
//     on disk, as the RPC server's reply gate does: tasks/s, journal bytes
//     and fsyncs per task, snapshots written; with fsync and without.
// Usage: edl_master_bench [TASKS=1000000] [WORKERS=1000]
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/logging.h"
#include "roles/master/journal.h"
#include "roles/master/master_core.h"

namespace {

using edl::roles::master::MasterCore;
using edl::roles::master::MasterOptions;
namespace protocol = edl::roles::protocol;
using protocol::TaskType;

constexpr double kMiB = 1024.0 * 1024.0;

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM").
int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) * 1024;
  }
  return -1;
}

// Clears VmHWM so the next peak is this run's (Linux >= 4.0).
// Returns freed heap to the system first, so runs do not inherit each
// other's memory.
void ResetPeakRss() {
  malloc_trim(0);
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::unique_ptr<MasterCore> NewMaster(const MasterOptions& o) {
  auto master = MasterCore::Create(o, edl::SystemClock());
  if (!master.ok()) {
    std::fprintf(stderr, "master: %s\n", master.status().message().c_str());
    std::exit(1);
  }
  return std::move(master).value();
}

MasterOptions TrainingJob(int64_t tasks) {
  MasterOptions o;
  o.job_name = "bench";
  o.records.training = tasks;
  o.minibatch_size = 1;
  o.num_minibatches_per_task = 1;
  o.num_epochs = 1;
  return o;
}

int64_t Register(MasterCore& m, const std::string& name) {
  protocol::RegisterWorkerRequest r;
  r.name = name;
  r.pid = 1;
  auto response = m.RegisterWorker(r);
  EDL_CHECK(response.ok()) << response.status().message();
  return response.value().worker_id;
}

protocol::Task GetTask(MasterCore& m, int64_t worker) {
  protocol::GetTaskRequest r;
  r.worker_id = worker;
  auto task = m.GetTask(r);
  EDL_CHECK(task.ok()) << task.status().message();
  return task.value();
}

void ReportOk(MasterCore& m, int64_t worker, int64_t task) {
  protocol::ReportTaskRequest r;
  r.worker_id = worker;
  r.task_id = task;
  r.samples = 1;
  EDL_CHECK(m.ReportTask(r).ok());
}

struct DispatchResult {
  double tasks_per_s = 0;
  int64_t tasks = 0;
  double rss_growth_mib = 0;   // VmRSS after the epoch's tasks exist
  double peak_growth_mib = 0;  // VmHWM after the run
};

// Workers [first, last) in round-robin until GetTask answers kDone.
int64_t Drive(MasterCore& m, const std::vector<int64_t>& ids, size_t first, size_t last) {
  int64_t done = 0;
  for (;;) {
    bool any_wait = false;
    for (size_t i = first; i < last; ++i) {
      const protocol::Task t = GetTask(m, ids[i]);
      if (t.type == TaskType::kDone) return done;
      if (t.type == TaskType::kWait) {
        any_wait = true;
        continue;
      }
      ReportOk(m, ids[i], t.id);
      ++done;
    }
    if (any_wait) std::this_thread::yield();
  }
}

DispatchResult Dispatch(int64_t tasks, int workers, int threads) {
  ResetPeakRss();
  const int64_t rss0 = ProcStatusBytes("VmRSS");
  std::unique_ptr<MasterCore> m = NewMaster(TrainingJob(tasks));
  std::vector<int64_t> ids;
  for (int i = 0; i < workers; ++i) ids.push_back(Register(*m, "worker-" + std::to_string(i)));
  DispatchResult r;
  // The first GetTask creates the epoch's tasks; measured in the rate too.
  const auto t0 = std::chrono::steady_clock::now();
  const protocol::Task first = GetTask(*m, ids[0]);
  r.rss_growth_mib = (ProcStatusBytes("VmRSS") - rss0) / kMiB;
  ReportOk(*m, ids[0], first.id);
  std::atomic<int64_t> done{1};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      done += Drive(*m, ids, ids.size() * t / threads, ids.size() * (t + 1) / threads);
    });
  }
  for (auto& th : pool) th.join();
  const auto t1 = std::chrono::steady_clock::now();
  r.peak_growth_mib = (ProcStatusBytes("VmHWM") - rss0) / kMiB;
  r.tasks = done.load();
  r.tasks_per_s = r.tasks / Seconds(t0, t1);
  EDL_CHECK(m->state() == edl::roles::master::JobState::kSucceeded);
  return r;
}

// A registers and takes every task of a 3-task job; B is registered.
struct Recovery {
  std::unique_ptr<MasterCore> m;
  int64_t a = 0, b = 0;
  std::set<int64_t> a_tasks;
};

Recovery StartRecovery(double heartbeat_timeout_s) {
  MasterOptions o = TrainingJob(3);
  o.heartbeat_timeout_s = heartbeat_timeout_s;
  Recovery r;
  r.m = NewMaster(o);
  r.a = Register(*r.m, "A");
  r.b = Register(*r.m, "B");
  for (int i = 0; i < 3; ++i) r.a_tasks.insert(GetTask(*r.m, r.a).id);
  EDL_CHECK(GetTask(*r.m, r.b).type == TaskType::kWait);
  return r;
}

// Microseconds from OnWorkerExit("A") to B's GetTask returning A's task.
std::vector<double> RecoverByExit(int trials) {
  std::vector<double> us;
  for (int i = 0; i < trials; ++i) {
    Recovery r = StartRecovery(2);
    const auto t0 = std::chrono::steady_clock::now();
    r.m->OnWorkerExit("A");
    const protocol::Task t = GetTask(*r.m, r.b);
    const auto t1 = std::chrono::steady_clock::now();
    EDL_CHECK(r.a_tasks.count(t.id) == 1) << "B got task " << t.id;
    us.push_back(Seconds(t0, t1) * 1e6);
  }
  std::sort(us.begin(), us.end());
  return us;
}

// Seconds from A's last heartbeat to B's GetTask returning one of A's tasks.
double RecoverByHeartbeat(double timeout_s) {
  Recovery r = StartRecovery(timeout_s);
  std::atomic<bool> stop{false};
  std::thread ticker([&] {
    auto next = std::chrono::steady_clock::now();
    while (!stop) {
      r.m->Tick();
      next += std::chrono::milliseconds(10);
      std::this_thread::sleep_until(next);
    }
  });
  protocol::HeartbeatRequest hb;
  hb.worker_id = r.a;
  EDL_CHECK(r.m->Heartbeat(hb).ok());
  const auto last_heartbeat = std::chrono::steady_clock::now();
  auto next = last_heartbeat;
  double seconds = -1;
  for (;;) {
    const protocol::Task t = GetTask(*r.m, r.b);
    if (t.type == TaskType::kTraining) {
      EDL_CHECK(r.a_tasks.count(t.id) == 1) << "B got task " << t.id;
      seconds = Seconds(last_heartbeat, std::chrono::steady_clock::now());
      break;
    }
    EDL_CHECK(t.type == TaskType::kWait);
    next += std::chrono::milliseconds(10);
    std::this_thread::sleep_until(next);
  }
  stop = true;
  ticker.join();
  return seconds;
}

double Percentile(const std::vector<double>& sorted, double p) {
  return sorted[static_cast<size_t>(p * (sorted.size() - 1))];
}

}  // namespace

struct JournalResult {
  double records_per_s = 0;
  double fsyncs_per_record = 0;
  double writes_per_record = 0;
  double bytes_per_record = 0;
};

JournalResult JournalRun(const std::string& dir, int threads, int64_t records, bool durable) {
  std::filesystem::remove_all(dir);
  edl::roles::master::Journal::Recovered recovered;
  auto journal = edl::roles::master::Journal::Open(dir, durable, &recovered);
  EDL_CHECK(journal.ok()) << journal.status().message();
  const std::string record(48, 'r');
  const int64_t each = records / threads;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int64_t i = 0; i < each; ++i) {
        auto seq = (*journal)->Append(record);
        EDL_CHECK(seq.ok() && (*journal)->Sync(*seq).ok());
      }
    });
  }
  for (auto& th : pool) th.join();
  const double s = Seconds(start, std::chrono::steady_clock::now());
  const auto stats = (*journal)->stats();
  std::filesystem::remove_all(dir);
  const double n = static_cast<double>(stats.records);
  return {n / s, static_cast<double>(stats.fsyncs) / n, static_cast<double>(stats.writes) / n,
          static_cast<double>(stats.bytes) / n};
}

// Dispatch with the journal on: `workers` simulated workers in round-robin
// from `threads` threads, each call's answer taken only once the core says
// the change is durable (WhenDurable, as the RPC server's reply gate does),
// so a worker has one call in flight at a time and the fsyncs are shared by
// whoever waits meanwhile.
struct DurableResult {
  double tasks_per_s = 0;
  double bytes_per_task = 0;
  double fsyncs_per_task = 0;
  uint64_t snapshots = 0;
};

DurableResult DurableDispatch(int64_t tasks, int workers, int threads, const std::string& dir,
                              bool durable) {
  std::filesystem::remove_all(dir);
  MasterOptions o = TrainingJob(tasks);
  o.state_dir = dir;
  o.durable_state = durable;
  std::unique_ptr<MasterCore> m = NewMaster(o);
  struct Sim {
    int64_t id = 0;
    int64_t task = 0;  // held, 0 = none, -1 = finished
    int64_t request = 0;
    std::atomic<bool> ready{true};
  };
  std::vector<Sim> sims(workers);
  for (int i = 0; i < workers; ++i) sims[i].id = Register(*m, "worker-" + std::to_string(i));
  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<int64_t> done{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const size_t first = sims.size() * t / threads, last = sims.size() * (t + 1) / threads;
      size_t finished = 0;
      int64_t mine = 0;
      while (finished < last - first) {
        bool progressed = false;
        for (size_t i = first; i < last; ++i) {
          Sim& s = sims[i];
          if (s.task < 0 || !s.ready.load(std::memory_order_acquire)) continue;
          if (s.task == 0) {
            protocol::GetTaskRequest r;
            r.worker_id = s.id;
            r.request = ++s.request;
            auto task = m->GetTask(r);
            EDL_CHECK(task.ok()) << task.status().message();
            if (task->type == TaskType::kDone) {
              s.task = -1;
              ++finished;
              continue;
            }
            if (task->type == TaskType::kWait) continue;
            s.task = task->id;
          } else {
            ReportOk(*m, s.id, s.task);
            s.task = 0;
            ++mine;
          }
          progressed = true;
          s.ready.store(false, std::memory_order_relaxed);
          m->WhenDurable([&s](edl::Status st) {
            EDL_CHECK(st.ok()) << st.message();
            s.ready.store(true, std::memory_order_release);
          });
        }
        if (!progressed) std::this_thread::yield();
      }
      done += mine;
    });
  }
  for (auto& th : pool) th.join();
  const double seconds = Seconds(t0, std::chrono::steady_clock::now());
  EDL_CHECK(m->state() == edl::roles::master::JobState::kSucceeded);
  const auto stats = m->journal_stats();
  m.reset();
  std::filesystem::remove_all(dir);
  const double n = static_cast<double>(done.load());
  return {n / seconds, static_cast<double>(stats.bytes) / n, static_cast<double>(stats.fsyncs) / n,
          stats.snapshots};
}

int main(int argc, char** argv) {
  const int64_t tasks = argc > 1 ? std::atoll(argv[1]) : 1'000'000;
  const int workers = argc > 2 ? std::atoi(argv[2]) : 1000;
  edl::SetLogLevel(edl::LogLevel::ERROR);

  std::printf("edl master benchmark (in-process MasterCore, real clock)\n");
  std::printf("%-44s %16s\n", "measure", "value");
  for (int threads : {1, 2}) {
    const DispatchResult r = Dispatch(tasks, workers, threads);
    char name[96];
    std::snprintf(name, sizeof name, "dispatch, %d workers, %d thread%s (tasks/s)", workers,
                  threads, threads > 1 ? "s" : "");
    std::printf("%-44s %16.0f\n", name, r.tasks_per_s);
    std::snprintf(name, sizeof name, "  tasks dispatched and reported (%dT)", threads);
    std::printf("%-44s %16lld\n", name, static_cast<long long>(r.tasks));
    const double per_million = 1e6 / static_cast<double>(tasks);
    std::snprintf(name, sizeof name, "  RSS growth, tasks created (MiB/1M) (%dT)", threads);
    std::printf("%-44s %16.1f\n", name, r.rss_growth_mib * per_million);
    std::snprintf(name, sizeof name, "  peak RSS growth, run (MiB/1M) (%dT)", threads);
    std::printf("%-44s %16.1f\n", name, r.peak_growth_mib * per_million);
  }

  const std::vector<double> exit_us = RecoverByExit(1000);
  std::printf("%-44s %16.1f\n", "recovery, OnWorkerExit: median (us)", Percentile(exit_us, 0.5));
  std::printf("%-44s %16.1f\n", "recovery, OnWorkerExit: p99 (us)", Percentile(exit_us, 0.99));
  std::printf("%-44s %16.1f\n", "recovery, OnWorkerExit: max (us)", exit_us.back());
  for (int i = 0; i < 3; ++i) {
    char name[96];
    std::snprintf(name, sizeof name, "recovery, heartbeat timeout 2 s, run %d (s)", i + 1);
    std::printf("%-44s %16.3f\n", name, RecoverByHeartbeat(2.0));
  }

  const char* env_dir = std::getenv("JOURNAL_DIR");
  const std::string dir = env_dir != nullptr ? env_dir : "journal_bench.tmp";
  std::printf("journal in %s\n", dir.c_str());
  for (bool durable : {true, false}) {
    for (int threads : {1, 2}) {
      const DurableResult r = DurableDispatch(tasks, workers, threads, dir + "/master", durable);
      char name[96];
      std::snprintf(name, sizeof name, "dispatch, journal %s, %dT (tasks/s)",
                    durable ? "+ fsync" : "no fsync", threads);
      std::printf("%-44s %16.0f\n", name, r.tasks_per_s);
      std::printf("%-44s %16.1f\n", "  journal bytes per task", r.bytes_per_task);
      std::printf("%-44s %16.4f\n", "  fsyncs per task", r.fsyncs_per_task);
      std::printf("%-44s %16llu\n", "  snapshots", static_cast<unsigned long long>(r.snapshots));
    }
  }
  for (bool durable : {true, false}) {
    for (int threads : {1, 8, 64, 512}) {
      const int64_t records = durable ? (threads == 1 ? 2000 : 40 * threads + 20000) : 400000;
      const JournalResult r = JournalRun(dir, threads, records, durable);
      char name[96];
      std::snprintf(name, sizeof name, "journal, %s, %d thread%s (records/s)",
                    durable ? "fsync" : "no fsync", threads, threads > 1 ? "s" : "");
      std::printf("%-44s %16.0f\n", name, r.records_per_s);
      std::printf("%-44s %16.4f\n", "  fsyncs per record", r.fsyncs_per_record);
      std::printf("%-44s %16.4f\n", "  write calls per record", r.writes_per_record);
      std::printf("%-44s %16.1f\n", "  bytes per record", r.bytes_per_record);
    }
  }
  return 0;
}
