#include "roles/master/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

#include "base/atomic_file.h"
#include "base/file.h"
#include "data/crc32c.h"

namespace edl::roles::master {
namespace {

namespace fs = std::filesystem;

constexpr char kSnapshotMagic[8] = {'E', 'D', 'L', 'S', 'N', 'A', 'P', '1'};
constexpr char kJournalMagic[8] = {'E', 'D', 'L', 'J', 'R', 'N', 'L', '1'};
constexpr size_t kJournalHeader = 16;   // magic, u64 first seq
constexpr size_t kSnapshotHeader = 28;  // magic, u64 seq, u64 size, u32 crc
constexpr size_t kRecordHeader = 8;     // u32 size, u32 crc
constexpr uint32_t kMaxRecord = 64u << 20;

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
template <typename T>
T Get(const std::string& in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(v));
  return v;
}

// A test hook, for the end-to-end test of a master SIGKILLed while it writes
// its snapshot (tests/cmd/applied_once_test.cc), so that the kill lands there
// by construction rather than by luck: EDL_TEST_SNAPSHOT_STALL_FILE=PATH in
// the environment (read once per process; nothing else reads it, and unset
// it changes nothing). A journal opened while PATH does not exist counts
// itself due for a snapshot (journal_bytes() says so) once it holds
// kStallEveryBytes of records, so snapshots come early in a small job, and
// its kStallAtSnapshot-th snapshot writes the header and half of the state to
// the temporary file, creates PATH and waits up to kStallFor for the test to
// kill the process; if nobody does, it finishes as usual and the hook is off.
// A journal opened when PATH exists (the next master's) ignores the hook.
constexpr uint64_t kStallEveryBytes = 4 << 10;
constexpr uint64_t kStallAtSnapshot = 2;  // the first leaves a snapshot to recover from
constexpr std::chrono::seconds kStallFor(60);

const std::string& StallFileFromEnvironment() {
  static const std::string path = [] {
    const char* p = std::getenv("EDL_TEST_SNAPSHOT_STALL_FILE");
    return std::string(p != nullptr ? p : "");
  }();
  return path;
}

uint32_t Crc(std::string_view s) { return data::Crc32c(s.data(), s.size()); }

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(Errno(path + ": write failed"));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return IoError(Errno(dir + ": cannot open to flush"));
  const int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? Status::Ok() : IoError(Errno(dir + ": cannot flush"));
}

// The journals in `dir`, by first sequence number.
std::vector<uint64_t> JournalSeqs(const std::string& dir) {
  std::vector<uint64_t> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("journal-", 0) != 0) continue;
    const std::string digits = name.substr(8);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.push_back(std::stoull(digits));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& dir, bool durable,
                                               Recovered* recovered) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create: " + ec.message());
  std::unique_ptr<Journal> j(new Journal(dir, durable));
  *recovered = Recovered();
  const std::string& stall = StallFileFromEnvironment();
  if (!stall.empty() && !fs::exists(stall, ec)) j->stall_file_ = stall;
  std::lock_guard<std::mutex> lock(j->mu_);
  EDL_RETURN_IF_ERROR(j->Recover(recovered));
  return j;
}

Journal::~Journal() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  wake_.notify_all();
  if (syncer_.joinable()) syncer_.join();
  // Records appended but never synced are written now, so a clean close
  // keeps them all.
  if (fd_ >= 0 && error_.ok() && !pending_.empty()) {
    if (WriteAll(fd_, pending_, JournalPath(journal_seq_)).ok() && durable_) ::fdatasync(fd_);
  }
  if (fd_ >= 0) ::close(fd_);
}

std::string Journal::JournalPath(uint64_t seq) const {
  return dir_ + "/journal-" + std::to_string(seq);
}

Status Journal::Recover(Recovered* recovered) {
  // A snapshot's temporary file (AtomicFileWriter's "snapshot.tmp.PID.TAG.N")
  // left by a process that died while writing it: never renamed into place,
  // so never the snapshot.
  std::vector<fs::path> half_written;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename().string().rfind("snapshot.tmp.", 0) == 0) half_written.push_back(e);
  }
  for (const fs::path& p : half_written) {
    std::error_code ec;
    if (!fs::remove(p, ec) && ec) {
      return IoError(p.string() + ": cannot remove a snapshot left half written: " + ec.message());
    }
  }
  // The snapshot, if any.
  const std::string snapshot_path = dir_ + "/snapshot";
  uint64_t base = 0;
  if (fs::exists(snapshot_path)) {
    EDL_ASSIGN_OR_RETURN(std::string s, ReadFile(snapshot_path));
    if (s.size() < kSnapshotHeader || std::memcmp(s.data(), kSnapshotMagic, 8) != 0) {
      return IoError(snapshot_path + ": not an edl snapshot (bad header at offset 0)");
    }
    base = Get<uint64_t>(s, 8);
    const uint64_t size = Get<uint64_t>(s, 16);
    if (s.size() - kSnapshotHeader != size) {
      return IoError(snapshot_path + ": state of " + std::to_string(size) +
                     " bytes announced at offset 16, but " +
                     std::to_string(s.size() - kSnapshotHeader) + " follow");
    }
    recovered->snapshot = s.substr(kSnapshotHeader);
    if (Crc(recovered->snapshot) != Get<uint32_t>(s, 24)) {
      return IoError(snapshot_path + ": the state (offset " + std::to_string(kSnapshotHeader) +
                     ") fails its checksum");
    }
    recovered->has_snapshot = true;
  }
  // Journals before the snapshot are covered by it (a crash came between
  // the snapshot and their deletion); a later one means records are lost.
  std::vector<uint64_t> seqs = JournalSeqs(dir_);
  for (uint64_t seq : seqs) {
    if (seq < base) {
      std::error_code ec;
      fs::remove(JournalPath(seq), ec);
    } else if (seq > base) {
      const std::string covered = recovered->has_snapshot ? snapshot_path + " ends at record "
                                                          : "no snapshot covers record ";
      return IoError(JournalPath(seq) + ": starts at record " + std::to_string(seq) + ", but " +
                     covered + std::to_string(base));
    }
  }
  journal_seq_ = next_seq_ = durable_next_ = base;
  const std::string path = JournalPath(base);
  if (!fs::exists(path)) return StartJournal(base);

  EDL_ASSIGN_OR_RETURN(std::string j, ReadFile(path));
  size_t valid = 0;
  if (j.size() >= kJournalHeader) {
    if (std::memcmp(j.data(), kJournalMagic, 8) != 0 || Get<uint64_t>(j, 8) != base) {
      return IoError(path + ": bad header at offset 0 (not an edl journal starting at record " +
                     std::to_string(base) + ")");
    }
    valid = kJournalHeader;
  }
  // else: torn while its header was being written; it holds no records.
  size_t at = valid;
  while (valid >= kJournalHeader && at < j.size()) {
    const size_t left = j.size() - at;
    if (left < kRecordHeader) break;  // a torn header
    const uint32_t size = Get<uint32_t>(j, at);
    const bool fits = size <= kMaxRecord && left - kRecordHeader >= size;
    if (!fits ||
        Crc(std::string_view(j).substr(at + kRecordHeader, size)) != Get<uint32_t>(j, at + 4)) {
      const size_t end = fits ? at + kRecordHeader + size : j.size();
      if (end == j.size()) break;  // the last record, torn
      return IoError(path + ": record " + std::to_string(next_seq_) + " at offset " +
                     std::to_string(at) + " fails its checksum, and " +
                     std::to_string(j.size() - end) + " more bytes follow it");
    }
    recovered->records.emplace_back(j, at + kRecordHeader, size);
    at += kRecordHeader + size;
    valid = at;
    ++next_seq_;
  }
  recovered->torn_bytes = j.size() - valid;
  if (valid < kJournalHeader) return StartJournal(base);  // rewrite the header
  fd_ = ::open(path.c_str(), O_WRONLY);
  if (fd_ < 0) return IoError(Errno(path + ": cannot open for appending"));
  if (recovered->torn_bytes > 0 && ::ftruncate(fd_, static_cast<off_t>(valid)) != 0) {
    return IoError(Errno(path + ": cannot cut the torn record at offset " + std::to_string(valid)));
  }
  if (::lseek(fd_, static_cast<off_t>(valid), SEEK_SET) < 0) {
    return IoError(Errno(path + ": cannot seek"));
  }
  if (durable_ && recovered->torn_bytes > 0 && ::fdatasync(fd_) != 0) {
    return IoError(Errno(path + ": cannot flush"));
  }
  journal_bytes_ = valid - kJournalHeader;
  durable_next_ = next_seq_;
  return Status::Ok();
}

Status Journal::StartJournal(uint64_t seq) {
  const std::string path = JournalPath(seq);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return IoError(Errno(path + ": cannot create"));
  std::string header(kJournalMagic, 8);
  Put<uint64_t>(header, seq);
  Status s = WriteAll(fd, header, path);
  if (s.ok() && durable_ && ::fdatasync(fd) != 0) s = IoError(Errno(path + ": cannot flush"));
  if (s.ok() && durable_) s = SyncDirectory(dir_);
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  journal_seq_ = seq;
  journal_bytes_ = 0;
  return Status::Ok();
}

Status Journal::Fail(Status s) {
  if (error_.ok() && !s.ok()) error_ = s;
  return s;
}

Result<uint64_t> Journal::Append(std::string_view record) {
  if (record.size() > kMaxRecord) {
    return InvalidArgument("journal record of " + std::to_string(record.size()) +
                           " bytes (at most " + std::to_string(kMaxRecord) + ")");
  }
  std::string frame;
  frame.reserve(kRecordHeader + record.size());
  Put<uint32_t>(frame, static_cast<uint32_t>(record.size()));
  Put<uint32_t>(frame, Crc(record));
  frame.append(record);
  std::lock_guard<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  pending_ += frame;
  journal_bytes_ += frame.size();
  ++stats_.records;
  stats_.bytes += frame.size();
  return next_seq_++;
}

void Journal::FlushLocked(std::unique_lock<std::mutex>& lock) {
  syncing_ = true;
  const uint64_t target = next_seq_;
  const int fd = fd_;
  const std::string path = JournalPath(journal_seq_);
  std::string batch;
  batch.swap(pending_);
  lock.unlock();
  Status s = WriteAll(fd, batch, path);
  if (s.ok() && durable_ && ::fdatasync(fd) != 0) s = IoError(Errno(path + ": cannot flush"));
  if (s.ok() && on_write_) s = on_write_();
  lock.lock();
  syncing_ = false;
  if (durable_) ++stats_.fsyncs;
  ++stats_.writes;
  if (!s.ok() && error_.ok()) error_ = s;
  if (s.ok()) durable_next_ = std::max(durable_next_, target);
  synced_.notify_all();
}

Status Journal::Sync(uint64_t seq) {
  std::unique_lock<std::mutex> lock(mu_);
  EDL_CHECK_LT(seq, next_seq_) << "Sync of a record never appended";
  while (durable_next_ <= seq) {
    if (!error_.ok()) return error_;
    if (syncing_) {
      synced_.wait(lock);
      continue;
    }
    // Lead: write everything appended so far in one go, then one fsync.
    FlushLocked(lock);
  }
  return Status::Ok();
}

void Journal::WhenDurable(uint64_t end, std::function<void(Status)> done) {
  std::unique_lock<std::mutex> lock(mu_);
  EDL_CHECK_LE(end, next_seq_) << "WhenDurable of a record never appended";
  if (!error_.ok() || end <= durable_next_) {
    Status s = error_;
    lock.unlock();
    done(s);
    return;
  }
  waiters_.push_back({end, std::move(done)});
  if (!syncer_.joinable()) syncer_ = std::thread(&Journal::SyncerLoop, this);
  wake_.notify_one();
}

void Journal::SyncerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  std::vector<std::function<void(Status)>> ready;
  while (true) {
    wake_.wait(lock, [&] { return closing_ || !waiters_.empty(); });
    if (waiters_.empty()) return;  // closing
    synced_.wait(lock, [&] { return !syncing_; });
    if (error_.ok() && durable_next_ < next_seq_) FlushLocked(lock);
    // Everyone whose records are on disk now (or who will never be).
    auto it = std::partition(waiters_.begin(), waiters_.end(),
                             [&](const Waiter& w) { return error_.ok() && w.end > durable_next_; });
    for (auto w = it; w != waiters_.end(); ++w) ready.push_back(std::move(w->done));
    waiters_.erase(it, waiters_.end());
    const Status s = error_;
    lock.unlock();
    for (auto& done : ready) done(s);
    ready.clear();
    lock.lock();
  }
}

Status Journal::Snapshot(std::string_view state) {
  std::unique_lock<std::mutex> lock(mu_);
  synced_.wait(lock, [&] { return !syncing_; });
  if (!error_.ok()) return error_;
  std::string header(kSnapshotMagic, 8);
  Put<uint64_t>(header, next_seq_);
  Put<uint64_t>(header, state.size());
  Put<uint32_t>(header, Crc(state));
  const std::string path = dir_ + "/snapshot";
  EDL_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> w, AtomicFileWriter::Open(path));
  EDL_RETURN_IF_ERROR(w->Append(header));
  if (!stall_file_.empty() && stats_.snapshots + 1 == kStallAtSnapshot) {
    // The test hook (kStallAtSnapshot): half written, the test kills us.
    const size_t half = state.size() / 2;
    EDL_RETURN_IF_ERROR(w->Append(state.substr(0, half)));
    EDL_RETURN_IF_ERROR(WriteFileAtomically(stall_file_, dir_ + "\n"));
    std::this_thread::sleep_for(kStallFor);
    stall_file_.clear();
    state.remove_prefix(half);
  }
  EDL_RETURN_IF_ERROR(w->Append(state));
  EDL_RETURN_IF_ERROR(w->Commit());
  if (durable_) EDL_RETURN_IF_ERROR(Fail(SyncDirectory(dir_)));
  // The snapshot covers the old journal and every record not written yet:
  // start the next, then drop it (unless no record came since the last
  // snapshot: then it is the same).
  pending_.clear();
  const uint64_t old = journal_seq_;
  if (old != next_seq_) {
    EDL_RETURN_IF_ERROR(Fail(StartJournal(next_seq_)));
    std::error_code ec;
    fs::remove(JournalPath(old), ec);
  }
  durable_next_ = next_seq_;
  if (on_write_) EDL_RETURN_IF_ERROR(Fail(on_write_()));
  ++stats_.snapshots;
  synced_.notify_all();
  wake_.notify_all();
  return Status::Ok();
}

void Journal::SetOnWrite(std::function<Status()> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  on_write_ = std::move(hook);
}

Status Journal::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

uint64_t Journal::journal_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!stall_file_.empty() && journal_bytes_ >= kStallEveryBytes) {
    return std::numeric_limits<uint64_t>::max();  // the test hook: due now
  }
  return journal_bytes_;
}

uint64_t Journal::next_seq() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_;
}

Journal::Stats Journal::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace edl::roles::master
