// ShmLink (net/collective/shm.h): the single-producer/single-consumer ring
// buffer in a shared-memory segment that same-host ring neighbours use:
// wrap-around and padding, reducing straight from the ring, closing, refusing
// foreign names and segments, cleaning up after dead processes, and the
// host identity that decides when two ranks may share memory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net/collective/shm.h"
#include "tests/net/ring_test_util.h"

namespace edl::net {
namespace {

using testing::SegmentNamesOf;

TEST(ShmLink, MovesBytesAcrossTheWrapAndPadsToSixtyFour) {
  auto producer = ShmLink::Create(4096);
  ASSERT_TRUE(producer.ok()) << producer.status().message();
  auto consumer = ShmLink::Open((*producer)->name());
  ASSERT_TRUE(consumer.ok()) << consumer.status().message();
  std::vector<char> in(10000), out(10000);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<char>(i * 13);
  size_t written = 0, read = 0;
  while (read < in.size()) {
    size_t w = (*producer)->Write(in.data() + written, in.size() - written);
    written += w;
    EXPECT_LE(written - read, 4096u);  // never more than the capacity
    size_t r = (*consumer)->Read(out.data() + read, 1500, false);
    read += r;
    ASSERT_TRUE(w > 0 || r > 0) << "stuck at " << read;
  }
  EXPECT_EQ(in, out);
  EXPECT_EQ((*producer)->PadBytes(), (64 - 10000 % 64) % 64);
  EXPECT_EQ((*consumer)->PadBytes(), (*producer)->PadBytes());
  EXPECT_FALSE((*consumer)->CanMove());
  EXPECT_TRUE((*producer)->CanMove());
}

TEST(ShmLink, ReducesFloatsStraightFromTheRing) {
  auto producer = ShmLink::Create(4096);
  ASSERT_TRUE(producer.ok());
  auto consumer = ShmLink::Open((*producer)->name());
  ASSERT_TRUE(consumer.ok());
  std::vector<float> sent(300), dest(300);
  for (size_t i = 0; i < sent.size(); ++i) {
    sent[i] = static_cast<float>(i);
    dest[i] = 1000.0f;
  }
  const size_t bytes = sent.size() * sizeof(float);
  ASSERT_EQ((*producer)->Write(reinterpret_cast<const char*>(sent.data()), bytes), bytes);
  ASSERT_EQ((*consumer)->Read(reinterpret_cast<char*>(dest.data()), bytes,
                              /*reduce_sum=*/true),
            bytes);
  for (size_t i = 0; i < dest.size(); ++i) {
    ASSERT_EQ(dest[i], 1000.0f + static_cast<float>(i));
  }
}

TEST(ShmLink, ClosingOneEndIsSeenByTheOtherAndEndsItsWait) {
  auto producer = ShmLink::Create(4096);
  ASSERT_TRUE(producer.ok());
  auto consumer = ShmLink::Open((*producer)->name());
  ASSERT_TRUE(consumer.ok());
  EXPECT_FALSE((*consumer)->Closed());
  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    while (!(*consumer)->Closed()) {
      (*consumer)->Wait(std::chrono::steady_clock::now() + std::chrono::seconds(60));
    }
    woke = true;
  });
  (*producer)->Close();
  EXPECT_TRUE(testing::WaitFor([&] { return woke.load(); }, std::chrono::seconds(20)));
  waiter.join();
  EXPECT_TRUE((*producer)->Closed());
}

TEST(ShmLink, OpenRefusesForeignNamesAndSegments) {
  for (const char* name : {"", "/etc-passwd", "/edl-ring-1/../x", "edl-ring-no-slash"}) {
    auto link = ShmLink::Open(name);
    ASSERT_FALSE(link.ok()) << name;
    EXPECT_EQ(link.status().code(), StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(ShmLink::Open("/edl-ring-" + std::string(300, 'a')).status().code(),
            StatusCode::kInvalidArgument);
  auto missing = ShmLink::Open("/edl-ring-1-missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  // A segment of the right name but not made by Create: wrong size, then
  // right size but no magic. Either way it is refused and unlinked.
  for (size_t size : {size_t{100}, size_t{4096 + 4096}}) {
    const std::string name = "/edl-ring-" + std::to_string(::getpid()) + "-foreign";
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    ::close(fd);
    auto foreign = ShmLink::Open(name);
    ASSERT_FALSE(foreign.ok()) << size;
    EXPECT_EQ(foreign.status().code(), StatusCode::kUnavailable);
    EXPECT_TRUE(SegmentNamesOf(::getpid()).empty());
  }
}

TEST(ShmLink, CreateUnlinksTheSegmentsOfProcessesThatAreGone) {
  // A child that exits plays a rank killed during its handshake.
  pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const std::string orphan = "/edl-ring-" + std::to_string(dead) + "-orphan";
  const std::string alive = "/edl-ring-" + std::to_string(::getppid()) + "-alive";  // our parent
  for (const std::string& name : {orphan, alive}) {
    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << name << ": " << std::strerror(errno);
    ::close(fd);
  }
  auto link = ShmLink::Create(4096);
  ASSERT_TRUE(link.ok()) << link.status().message();
  EXPECT_TRUE(SegmentNamesOf(dead).empty());
  EXPECT_EQ(SegmentNamesOf(::getppid()).size(), 1u);  // its owner lives
  ::shm_unlink(alive.c_str());
}

TEST(ShmLink, HostIdentityNamesThisBootHostAndIpcNamespace) {
  std::string host = HostIdentity();
  ASSERT_FALSE(host.empty());  // /proc is there on Linux
  EXPECT_EQ(host, HostIdentity());
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(boot_id, boot);
  EXPECT_EQ(host.rfind(boot + "/" + name + "/ipc:[", 0), 0u) << host;
}

}  // namespace
}  // namespace edl::net
