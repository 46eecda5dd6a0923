// The job secret (roles/job/job_secret.h).
#include "roles/job/job_secret.h"

#include "roles/job/process_options.h"
#include "roles/job_dir.h"

namespace edl::roles::job {

Result<std::string> LoadSecret(const JobAccess& job) {
  if (!job.secret_file.empty()) {
    auto secret = ReadSecretFile(job.secret_file);
    if (!secret.ok()) return secret.status().WithPrefix("--secret_file");
    return secret;
  }
  if (job.job_dir.empty()) return InvalidArgument("--job_dir or --secret_file is required");
  return ReadSecret(JobDirectory{job.job_dir});
}

}  // namespace edl::roles::job
