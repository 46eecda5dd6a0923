// Journal: durable state for a process that must survive its own death (the
// master: docs/distributed.md, 'A master that survives its own death'): an
// append-only log of records plus a compacted snapshot, in one directory.
//
//   DIR/snapshot       "EDLSNAP1", u64 seq, u64 size, u32 crc32c(state), state
//   DIR/journal-SEQ    "EDLJRNL1", u64 SEQ, then records:
//                      u32 size, u32 crc32c(payload), payload
//
// Records get consecutive sequence numbers from 0. The snapshot holds the
// state after every record before its seq; journal-SEQ holds the records
// from SEQ on. A snapshot is written to a temporary file, fsynced and
// renamed over the old one (then the directory is fsynced) before a new
// journal starts and the old one is deleted, so a crash at any point leaves
// a snapshot and the records after it.
//
// Open recovers: the snapshot, then its journal's records. A record cut
// short, or failing its checksum, at the very end of the journal is a torn
// write (the process died while appending it, before anyone was told it was
// durable): it is dropped and the file truncated there. A bad record with
// more data after it, a bad snapshot, or a journal that is missing is
// refused with an IoError naming the file and offset: never silently wrong.
// A snapshot's temporary file (a process died while writing it) is removed.
//
// Durability: Append only buffers (no system call); Sync(seq) returns once
// every record up to seq is on disk. Concurrent Syncs share the work (group
// commit): one thread writes everything appended so far with one write and
// one fsync while the others wait; a record that came too late for it goes
// with the next, which covers everyone who waited meanwhile. WhenDurable
// is the same without a waiting thread: one syncer thread writes and fsyncs
// whatever is pending while callbacks wait, so a server can answer a
// request once its record is on disk without a thread per request. Records
// never synced are written when the journal is destroyed.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"

namespace edl::roles::master {

class Journal {
 public:
  struct Recovered {
    bool has_snapshot = false;
    std::string snapshot;
    std::vector<std::string> records;  // after the snapshot, in order
    uint64_t torn_bytes = 0;           // dropped from the journal's end
  };
  struct Stats {
    uint64_t records = 0;    // appended by this process
    uint64_t bytes = 0;      // written to journals by this process
    uint64_t writes = 0;     // write system calls of records
    uint64_t fsyncs = 0;     // of journals (0 when not durable)
    uint64_t snapshots = 0;  // written by this process
  };

  // Opens (creating `dir` if need be) and recovers into *recovered.
  // `durable` false skips every fsync (tests and benchmarks of the rest).
  static Result<std::unique_ptr<Journal>> Open(const std::string& dir, bool durable,
                                               Recovered* recovered);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Writes a record; returns its sequence number. An IoError leaves the
  // journal unusable (every later call fails).
  Result<uint64_t> Append(std::string_view record);
  // Returns once every record up to `seq` is on disk.
  Status Sync(uint64_t seq);
  // Calls `done` (on the syncer thread, or at once when nothing is left to
  // write) once every record before `end` is on disk, with the journal's
  // error if writing failed. REQUIRES: end <= next_seq().
  void WhenDurable(uint64_t end, std::function<void(Status)> done);
  // Called (one call at a time) after records were written and synced,
  // before they count as durable, and after a snapshot replaced the
  // journal: a copy of the directory kept elsewhere (a ConfigMap) is
  // brought up to date there. An error fails the journal. Set before use.
  void SetOnWrite(std::function<Status()> hook);
  // Replaces the snapshot with `state`, which must be the state after every
  // record appended so far, and starts a new, empty journal. REQUIRES: no
  // Append concurrently (the caller holds the lock its state is under).
  Status Snapshot(std::string_view state);

  // The bytes of records since the last snapshot (when to compact; a test
  // hook may say more: EDL_TEST_SNAPSHOT_STALL_FILE in journal.cc).
  uint64_t journal_bytes() const;
  // The first write or sync failure (OK while none).
  Status error() const;
  uint64_t next_seq() const;
  Stats stats() const;

 private:
  Journal(std::string dir, bool durable) : dir_(std::move(dir)), durable_(durable) {}
  Status Recover(Recovered* recovered);
  // Creates journal-<seq> with its header; REQUIRES mu_.
  Status StartJournal(uint64_t seq);
  std::string JournalPath(uint64_t seq) const;
  // REQUIRES mu_: remembers s if it is the first failure; returns s.
  Status Fail(Status s);
  // REQUIRES lock holds mu_ and !syncing_: writes everything pending with
  // one write and one fsync, releasing mu_ meanwhile.
  void FlushLocked(std::unique_lock<std::mutex>& lock);
  void SyncerLoop();

  const std::string dir_;
  const bool durable_;
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable synced_;
  int fd_ = -1;                 // the current journal, for appending
  uint64_t journal_seq_ = 0;    // its first sequence number
  uint64_t next_seq_ = 0;       // of the next record
  uint64_t durable_next_ = 0;   // records before this are on disk
  bool syncing_ = false;        // an fsync is in progress (mu_ released)
  uint64_t journal_bytes_ = 0;  // records' bytes in the current journal
  std::string pending_;         // records appended, not written yet
  Status error_;
  Stats stats_;
  struct Waiter {
    uint64_t end;
    std::function<void(Status)> done;
  };
  std::vector<Waiter> waiters_;   // of WhenDurable
  std::condition_variable wake_;  // the syncer: waiters or closing
  bool closing_ = false;
  std::thread syncer_;  // started by the first WhenDurable
  std::function<Status()> on_write_;
  // The test hook's file, "" when off (EDL_TEST_SNAPSHOT_STALL_FILE: see
  // journal.cc; tests/cmd/applied_once_test.cc only).
  std::string stall_file_;
};

}  // namespace edl::roles::master
