// The master's journal: records and snapshots survive a reopen, a torn last
// record is dropped (and the journal goes on from there), corruption with
// data after it and a corrupt snapshot are refused naming file and offset,
// a crash between a snapshot and its journal's deletion recovers, a snapshot
// left half written is ignored and removed, concurrent Syncs share fsyncs,
// and WhenDurable answers once the record is on disk, without a waiting
// thread per record.
#include "roles/master/journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "base/file.h"

namespace edl::roles::master {
namespace {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  JournalTest()
      : dir_((fs::temp_directory_path() /
              ("edl-journal-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                 .string()) {
    fs::remove_all(dir_);
  }
  ~JournalTest() override { fs::remove_all(dir_); }

  std::unique_ptr<Journal> Open(Journal::Recovered* r) {
    auto j = Journal::Open(dir_, /*durable=*/true, r);
    EXPECT_TRUE(j.ok()) << j.status().message();
    return j.ok() ? std::move(*j) : nullptr;
  }
  std::string OpenError() {
    Journal::Recovered r;
    auto j = Journal::Open(dir_, true, &r);
    return j.ok() ? "OK" : j.status().message();
  }
  void AppendAll(Journal& j, const std::vector<std::string>& records) {
    for (const std::string& r : records) {
      auto seq = j.Append(r);
      ASSERT_TRUE(seq.ok()) << seq.status().message();
      ASSERT_TRUE(j.Sync(*seq).ok());
    }
  }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }
  void Rewrite(const std::string& name, const std::string& bytes) {
    std::ofstream(File(name), std::ios::binary | std::ios::trunc) << bytes;
  }

  std::string dir_;
};

TEST_F(JournalTest, RecordsAndTheSnapshotSurviveAReopen) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    EXPECT_FALSE(r.has_snapshot);
    EXPECT_TRUE(r.records.empty());
    AppendAll(*j, {"a", "bb", "ccc"});
    ASSERT_TRUE(j->Snapshot("state after 3").ok());
    AppendAll(*j, {"dddd", std::string(100000, 'e')});
    EXPECT_EQ(j->next_seq(), 5u);
  }
  auto j = Open(&r);
  EXPECT_TRUE(r.has_snapshot);
  EXPECT_EQ(r.snapshot, "state after 3");
  EXPECT_EQ(r.records, (std::vector<std::string>{"dddd", std::string(100000, 'e')}));
  EXPECT_EQ(r.torn_bytes, 0u);
  EXPECT_EQ(j->next_seq(), 5u);
  // The old journal went with the snapshot.
  EXPECT_FALSE(fs::exists(File("journal-0")));
  EXPECT_TRUE(fs::exists(File("journal-3")));
}

TEST_F(JournalTest, ATornLastRecordIsDroppedAndTheJournalGoesOnFromThere) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    AppendAll(*j, {"one", "two", "three"});
  }
  // The process died while writing the last record: its tail is missing.
  const auto size = fs::file_size(File("journal-0"));
  fs::resize_file(File("journal-0"), size - 2);
  {
    auto j = Open(&r);
    EXPECT_EQ(r.records, (std::vector<std::string>{"one", "two"}));
    EXPECT_EQ(r.torn_bytes, 8u + 5u - 2u);
    EXPECT_EQ(fs::file_size(File("journal-0")), size - 8 - 5);
    AppendAll(*j, {"four"});
  }
  auto j = Open(&r);
  EXPECT_EQ(r.records, (std::vector<std::string>{"one", "two", "four"}));
  EXPECT_EQ(r.torn_bytes, 0u);
}

TEST_F(JournalTest, AGarbageLengthAtTheEndIsATornRecord) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    AppendAll(*j, {"kept"});
  }
  std::string bytes = ReadFile(File("journal-0")).value();
  bytes += std::string("\xff\xff\x00\x00\x01\x02\x03\x04partial", 15);
  Rewrite("journal-0", bytes);
  auto j = Open(&r);
  EXPECT_EQ(r.records, (std::vector<std::string>{"kept"}));
  EXPECT_EQ(r.torn_bytes, 15u);
}

TEST_F(JournalTest, ACorruptRecordWithDataAfterItIsRefusedNamingFileAndOffset) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    AppendAll(*j, {"first", "second", "third"});
  }
  std::string bytes = ReadFile(File("journal-0")).value();
  // Header 16 bytes, "first" 8 + 5: "second" starts at offset 29.
  bytes[29 + 8 + 2] ^= 0x20;
  Rewrite("journal-0", bytes);
  EXPECT_EQ(OpenError(), File("journal-0") +
                             ": record 1 at offset 29 fails its checksum, and 13 more bytes "
                             "follow it");
}

TEST_F(JournalTest, ACorruptSnapshotIsRefused) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    AppendAll(*j, {"x"});
    ASSERT_TRUE(j->Snapshot("the state").ok());
  }
  std::string bytes = ReadFile(File("snapshot")).value();
  bytes.back() ^= 1;
  Rewrite("snapshot", bytes);
  EXPECT_EQ(OpenError(), File("snapshot") + ": the state (offset 28) fails its checksum");
  Rewrite("snapshot", "not a snapshot at all, but long enough");
  EXPECT_EQ(OpenError(), File("snapshot") + ": not an edl snapshot (bad header at offset 0)");
}

TEST_F(JournalTest, AJournalAfterTheSnapshotsEndIsRefusedAsLostRecords) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    AppendAll(*j, {"a", "b"});
    ASSERT_TRUE(j->Snapshot("s").ok());  // covers records 0 and 1
  }
  fs::rename(File("journal-2"), File("journal-7"));
  EXPECT_EQ(OpenError(), File("journal-7") + ": starts at record 7, but " + File("snapshot") +
                             " ends at record 2");
}

TEST_F(JournalTest, ACrashBetweenTheSnapshotAndTheNewJournalRecovers) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    AppendAll(*j, {"a", "b"});
    ASSERT_TRUE(j->Snapshot("after b").ok());
  }
  // As if the process died after renaming the snapshot into place, before
  // creating journal-2 and deleting journal-0.
  fs::remove(File("journal-2"));
  std::ofstream(File("journal-0"), std::ios::binary) << "EDLJRNL1" << std::string(8, '\0');
  {
    auto j = Open(&r);
    EXPECT_EQ(r.snapshot, "after b");
    EXPECT_TRUE(r.records.empty());
    EXPECT_EQ(j->next_seq(), 2u);
    AppendAll(*j, {"c"});
  }
  EXPECT_FALSE(fs::exists(File("journal-0")));
  auto j = Open(&r);
  EXPECT_EQ(r.records, std::vector<std::string>{"c"});
}

TEST_F(JournalTest, ASnapshotLeftHalfWrittenIsIgnoredAndRemoved) {
  Journal::Recovered r;
  {
    auto j = Open(&r);
    AppendAll(*j, {"a", "b"});
    ASSERT_TRUE(j->Snapshot("after b").ok());
    AppendAll(*j, {"c", "d"});
  }
  // As if the process died while writing the next snapshot (after d) into
  // its temporary file, before the rename.
  const std::string whole = ReadFile(File("snapshot")).value();
  Rewrite("snapshot.tmp.4242.1", whole.substr(0, whole.size() / 2));
  {
    auto j = Open(&r);
    EXPECT_TRUE(r.has_snapshot);
    EXPECT_EQ(r.snapshot, "after b");
    EXPECT_EQ(r.records, (std::vector<std::string>{"c", "d"}));
    EXPECT_EQ(j->next_seq(), 4u);
    EXPECT_FALSE(fs::exists(File("snapshot.tmp.4242.1")));
    ASSERT_TRUE(j->Snapshot("after d").ok());
  }
  auto j = Open(&r);
  EXPECT_EQ(r.snapshot, "after d");
  EXPECT_TRUE(r.records.empty());
}

TEST_F(JournalTest, ConcurrentSyncsShareFsyncsAndEveryRecordIsKeptOnce) {
  constexpr int kThreads = 8, kEach = 100;
  Journal::Recovered r;
  {
    auto j = Open(&r);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          auto seq = j->Append(std::to_string(t) + ":" + std::to_string(i));
          if (!seq.ok() || !j->Sync(*seq).ok()) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    const Journal::Stats s = j->stats();
    EXPECT_EQ(s.records, uint64_t{kThreads * kEach});
    EXPECT_LT(s.fsyncs, s.records);  // some fsync covered several records
    EXPECT_EQ(s.writes, s.fsyncs);   // one write of the batch per fsync
  }
  auto j = Open(&r);
  ASSERT_EQ(r.records.size(), size_t{kThreads * kEach});
  std::set<std::string> unique(r.records.begin(), r.records.end());
  EXPECT_EQ(unique.size(), r.records.size());
}

TEST_F(JournalTest, WhenDurableCallsBackOnceTheRecordIsOnDiskSharingFsyncs) {
  constexpr int kRecords = 2000;
  Journal::Recovered r;
  std::mutex mu;
  std::condition_variable cv;
  int answered = 0;
  uint64_t fsyncs = 0;
  {
    auto j = Open(&r);
    for (int i = 0; i < kRecords; ++i) {
      auto seq = j->Append("record " + std::to_string(i));
      ASSERT_TRUE(seq.ok());
      j->WhenDurable(*seq + 1, [&, j = j.get(), seq = *seq](Status s) {
        EXPECT_TRUE(s.ok()) << s.message();
        // The journal says so too: a Sync of it returns at once.
        EXPECT_TRUE(j->Sync(seq).ok());
        std::lock_guard<std::mutex> lock(mu);
        ++answered;
        cv.notify_all();
      });
    }
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return answered == kRecords; }));
    fsyncs = j->stats().fsyncs;
  }
  EXPECT_GE(fsyncs, 1u);
  EXPECT_LT(fsyncs, uint64_t{kRecords});  // records appended meanwhile shared one
  auto j = Open(&r);
  EXPECT_EQ(r.records.size(), size_t{kRecords});
}

TEST_F(JournalTest, WhenDurableOfRecordsAlreadyOnDiskAnswersAtOnce) {
  Journal::Recovered r;
  auto j = Open(&r);
  AppendAll(*j, {"a", "b"});
  bool called = false;
  j->WhenDurable(2, [&](Status s) {
    EXPECT_TRUE(s.ok());
    called = true;
  });
  EXPECT_TRUE(called);  // on this thread, before WhenDurable returned
}

}  // namespace
}  // namespace edl::roles::master
