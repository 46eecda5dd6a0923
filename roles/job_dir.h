// JobDirectory: where a local-cluster job keeps what its processes and the
// control commands (edl status / stop / scale) share: `<root>/<job>/secret`
// (the job's RPC secret, mode 0600, in a 0700 directory: only the job's user
// can read it) and `master.json` (the master's address, written atomically
// once it listens). Plain functions; safe to call from any process.
#pragma once

#include <string>

#include "base/status.h"

namespace edl::roles {

struct JobDirectory {
  std::string path;  // <root>/<job name>

  std::string SecretPath() const { return path + "/secret"; }
  std::string MasterAddressPath() const { return path + "/master.json"; }
  // {"exit_code": N, "ended_unix_s": T}, written atomically by the job's
  // `edl train` process when the job ends (edl wait reads it).
  std::string OutcomePath() const { return path + "/outcome.json"; }
};

// Creates (or reuses) the job's directory and writes a fresh random secret.
// InvalidArgument for a job name that is not [A-Za-z0-9_.-]+.
Result<JobDirectory> CreateJobDirectory(const std::string& root, const std::string& job);
// The directory of an existing job; NotFound naming the job otherwise.
Result<JobDirectory> FindJobDirectory(const std::string& root, const std::string& job);

Result<std::string> ReadSecret(const JobDirectory& dir);
// `bytes` random bytes from the kernel (getrandom(2), which needs no /dev)
// as lower-case hex (job secrets).
Result<std::string> RandomHex(size_t bytes);
// A secret file anywhere (trailing whitespace dropped); InvalidArgument
// naming the file when it is empty.
Result<std::string> ReadSecretFile(const std::string& path);

struct MasterAddress {
  std::string host;
  int port = 0;
  int64_t pid = 0;
};
Status WriteMasterAddress(const JobDirectory& dir, const MasterAddress& address);
Result<MasterAddress> ReadMasterAddress(const JobDirectory& dir);

}  // namespace edl::roles
