// The shared-memory ring links of the ring collectives
// (net/collective/shm.h).
#include "net/collective/shm.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/check.h"

namespace edl::net {

// Counters on separate cache lines so that the producer's and the consumer's
// writes do not bounce one line between cores.
struct ShmHeader {
  uint64_t magic;
  uint64_t capacity;
  alignas(64) uint64_t head;       // producer writes
  alignas(64) uint64_t tail;       // consumer writes
  alignas(64) uint32_t data_seq;   // futex: bumped when data is published
  uint32_t consumer_waiting;       // 1 while the consumer sleeps on data_seq
  alignas(64) uint32_t space_seq;  // futex: bumped when room is made
  uint32_t producer_waiting;       // 1 while the producer sleeps on space_seq
  alignas(64) uint32_t closed;     // 1 once either end closed
};

namespace {

constexpr uint64_t kMagic = 0x31304d4853524445;  // "EDRSHM01"
constexpr size_t kHeaderBytes = 4096;
static_assert(sizeof(ShmHeader) <= kHeaderBytes);
constexpr char kNamePrefix[] = "/edl-ring-";
// Most bytes one Write or Read moves before publishing, so the peer starts
// on a piece before all of it is there (256 KiB measured a little faster
// than 64 KiB and 16 KiB on a 2-core VM, scripts/bench/allreduce_bench.sh).
constexpr size_t kChunkBytes = size_t{256} << 10;
// Longest single futex sleep: FUTEX_WAIT is on a relative timeout.
constexpr auto kMaxSleep = std::chrono::milliseconds(100);

template <typename T>
std::atomic_ref<T> Atomic(T& value) {
  static_assert(std::atomic_ref<T>::is_always_lock_free);
  return std::atomic_ref<T>(value);
}

void FutexWake(uint32_t* word) {
  ::syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void FutexWait(uint32_t* word, uint32_t expected, RingClock::duration for_) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(for_).count();
  if (ns <= 0) return;
  timespec ts{static_cast<time_t>(ns / 1000000000), ns % 1000000000};
  ::syscall(SYS_futex, word, FUTEX_WAIT, expected, &ts, nullptr, 0);
}

std::string Errno() { return std::strerror(errno); }

void AddInto(char* dest, const char* src, size_t bytes) {
  float* __restrict d = reinterpret_cast<float*>(dest);
  const float* __restrict s = reinterpret_cast<const float*>(src);
  size_t n = bytes / sizeof(float);
  for (size_t i = 0; i < n; ++i) d[i] += s[i];
}

// Unlinks the segments of processes that no longer exist: a rank killed
// while its hello was in flight leaves its segment's name behind.
void ReapOrphanSegments() {
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return;
  const std::string prefix = kNamePrefix + 1;  // without the '/'
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      ::shm_unlink(("/" + name).c_str());
    }
  }
  ::closedir(dir);
}

}  // namespace

std::string HostIdentity() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (!std::getline(in, boot_id) || boot_id.empty()) return "";
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "";
  // Containers of one machine (Kubernetes pods) have their own IPC namespace
  // and /dev/shm: naming it keeps them on TCP instead of failing to open.
  char ipc[64] = {};
  ssize_t n = ::readlink("/proc/self/ns/ipc", ipc, sizeof(ipc) - 1);
  return boot_id + "/" + host + "/" + (n > 0 ? std::string(ipc, n) : "");
}

ShmLink::ShmLink(std::string name, bool producer, void* base, size_t mapped_bytes)
    : name_(std::move(name)),
      producer_(producer),
      base_(base),
      mapped_bytes_(mapped_bytes),
      header_(static_cast<ShmHeader*>(base)),
      data_(static_cast<char*>(base) + kHeaderBytes),
      capacity_(mapped_bytes - kHeaderBytes) {}

Result<std::unique_ptr<ShmLink>> ShmLink::Create(size_t capacity) {
  EDL_CHECK(capacity >= 4096 && (capacity & (capacity - 1)) == 0)
      << "shared-memory ring capacity " << capacity;
  ReapOrphanSegments();
  unsigned char random[16];
  if (::getrandom(random, sizeof(random), 0) != sizeof(random)) {
    return Unavailable("shared-memory ring: getrandom: " + Errno());
  }
  std::string name = kNamePrefix + std::to_string(::getpid()) + "-";
  for (unsigned char byte : random) {
    const char* hex = "0123456789abcdef";
    name += hex[byte >> 4];
    name += hex[byte & 15];
  }
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Unavailable("shared-memory ring " + name + ": create: " + Errno());
  }
  const size_t bytes = kHeaderBytes + capacity;
  void* base = MAP_FAILED;
  // Reserve the pages now: a full /dev/shm (64 MiB in a default container)
  // then fails here, to TCP, instead of a SIGBUS on a later write.
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc == 0) {
    base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED) ::madvise(base, bytes, MADV_DONTFORK);
  } else {
    errno = rc;
  }
  std::string error = Errno();
  ::close(fd);
  if (base == MAP_FAILED) {
    ::shm_unlink(name.c_str());
    return Unavailable("shared-memory ring " + name + ": " + error);
  }
  auto* header = new (base) ShmHeader{};
  header->capacity = capacity;
  header->magic = kMagic;
  return std::unique_ptr<ShmLink>(new ShmLink(name, true, base, bytes));
}

Result<std::unique_ptr<ShmLink>> ShmLink::Open(const std::string& name) {
  const size_t prefix = sizeof(kNamePrefix) - 1;
  if (name.size() > kShmMaxNameBytes || name.compare(0, prefix, kNamePrefix) ||
      name.find('/', 1) != std::string::npos) {
    return InvalidArgument("shared-memory ring: not a ring segment name: \"" + name + "\"");
  }
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    return Unavailable("shared-memory ring " + name + ": open: " + Errno());
  }
  // Gone from /dev/shm as soon as it is open: nothing can leak from here.
  ::shm_unlink(name.c_str());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::string error = Errno();
    ::close(fd);
    return Unavailable("shared-memory ring " + name + ": stat: " + error);
  }
  const size_t bytes = static_cast<size_t>(st.st_size);
  const size_t capacity = bytes > kHeaderBytes ? bytes - kHeaderBytes : 0;
  if (capacity < 4096 || (capacity & (capacity - 1)) != 0 || capacity > (size_t{1} << 30)) {
    ::close(fd);
    return Unavailable("shared-memory ring " + name + ": size " + std::to_string(bytes) +
                       " is not a ring segment's");
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  std::string error = Errno();
  ::close(fd);
  if (base == MAP_FAILED) {
    return Unavailable("shared-memory ring " + name + ": map: " + error);
  }
  ::madvise(base, bytes, MADV_DONTFORK);  // a forked child gets no copy
  auto link = std::unique_ptr<ShmLink>(new ShmLink(name, false, base, bytes));
  link->unlinked_ = true;
  const ShmHeader& header = *link->header_;
  if (header.magic != kMagic || header.capacity != capacity || header.head != 0 ||
      header.tail != 0) {
    return Unavailable("shared-memory ring " + name + ": not a fresh edl ring segment");
  }
  return link;
}

ShmLink::~ShmLink() {
  Close();
  ::munmap(base_, mapped_bytes_);
  Unlink();
}

void ShmLink::Unlink() {
  if (!unlinked_) ::shm_unlink(name_.c_str());
  unlinked_ = true;
}

size_t ShmLink::Write(const char* data, size_t bytes) {
  EDL_CHECK(producer_) << "Write on the consumer end of " << name_;
  size_t used = position_ - peer_position_;
  if (used == capacity_) {
    peer_position_ = Atomic(header_->tail).load(std::memory_order_acquire);
    used = position_ - peer_position_;
  }
  const size_t at = position_ & (capacity_ - 1);
  const size_t n = std::min({bytes, capacity_ - used, capacity_ - at, kChunkBytes});
  if (n == 0) return 0;
  if (data != nullptr) std::memcpy(data_ + at, data, n);
  position_ += n;
  // seq_cst store, then the load of consumer_waiting: pairs with Wait()'s
  // store of the flag and load of head (one of the two sees the other).
  Atomic(header_->head).store(position_, std::memory_order_seq_cst);
  if (Atomic(header_->consumer_waiting).load(std::memory_order_seq_cst)) {
    Atomic(header_->data_seq).fetch_add(1, std::memory_order_seq_cst);
    FutexWake(&header_->data_seq);
  }
  return n;
}

size_t ShmLink::Read(char* dest, size_t bytes, bool reduce_sum) {
  EDL_CHECK(!producer_) << "Read on the producer end of " << name_;
  size_t ready = peer_position_ - position_;
  if (ready == 0) {
    peer_position_ = Atomic(header_->head).load(std::memory_order_acquire);
    ready = peer_position_ - position_;
  }
  const size_t at = position_ & (capacity_ - 1);
  const size_t n = std::min({bytes, ready, capacity_ - at, kChunkBytes});
  if (n == 0) return 0;
  if (dest != nullptr) {
    if (reduce_sum) {
      EDL_CHECK(at % sizeof(float) == 0 && n % sizeof(float) == 0)
          << "misaligned floats in " << name_;
      AddInto(dest, data_ + at, n);
    } else {
      std::memcpy(dest, data_ + at, n);
    }
  }
  position_ += n;
  Atomic(header_->tail).store(position_, std::memory_order_seq_cst);
  if (Atomic(header_->producer_waiting).load(std::memory_order_seq_cst)) {
    Atomic(header_->space_seq).fetch_add(1, std::memory_order_seq_cst);
    FutexWake(&header_->space_seq);
  }
  return n;
}

size_t ShmLink::PadBytes() const { return (64 - position_ % 64) % 64; }

void ShmLink::Wait(RingClock::time_point until) {
  uint32_t& seq = producer_ ? header_->space_seq : header_->data_seq;
  uint32_t& waiting = producer_ ? header_->producer_waiting : header_->consumer_waiting;
  const uint32_t seen = Atomic(seq).load(std::memory_order_seq_cst);
  Atomic(waiting).store(1, std::memory_order_seq_cst);
  if (!CanMove() && !Closed()) {
    auto left = until - RingClock::now();
    FutexWait(&seq, seen, std::min<RingClock::duration>(left, kMaxSleep));
  }
  Atomic(waiting).store(0, std::memory_order_relaxed);
}

bool ShmLink::CanMove() const {
  return producer_ ? position_ - Atomic(header_->tail).load() < capacity_
                   : Atomic(header_->head).load() != position_;
}

bool ShmLink::Closed() const {
  return Atomic(header_->closed).load(std::memory_order_acquire) != 0;
}

void ShmLink::Close() {
  Atomic(header_->closed).store(1, std::memory_order_seq_cst);
  for (uint32_t* word : {&header_->data_seq, &header_->space_seq}) {
    Atomic(*word).fetch_add(1, std::memory_order_seq_cst);
    FutexWake(word);
  }
}

}  // namespace edl::net
