#include "tests/fakekube/server/loopback_block.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include "base/check.h"

namespace edl::fakekube {

LoopbackBlock::LoopbackBlock() {
  const std::string dir = "/tmp/edl-fake-kube-loopback";
  ::mkdir(dir.c_str(), 01777);
  constexpr int kFirst = 12, kLast = 250;
  std::random_device random;
  const int start = static_cast<int>(random() % (kLast - kFirst + 1));
  for (int i = 0; i <= kLast - kFirst; ++i) {
    const int n = kFirst + (start + i) % (kLast - kFirst + 1);
    const std::string path = dir + "/" + std::to_string(n) + ".lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      prefix_ = "127." + std::to_string(n) + ".";
      return;
    }
    ::close(fd);
  }
  EDL_CHECK(false) << "no free loopback block under " << dir;
}

LoopbackBlock::~LoopbackBlock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace edl::fakekube
