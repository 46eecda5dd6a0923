// The job page: one self-contained HTML document (CSS and JavaScript inline,
// nothing fetched from elsewhere) that the master serves at `/`. It polls the
// master's `status` and `series` endpoints (relative URLs, so it works both
// at http://host:port/ and behind the Kubernetes API server's service proxy)
// every two seconds and draws the job's state, progress and ETA, the curves
// of /series, the workers, parameter servers and ring, the data ledger per
// epoch, the evaluations and the incident timeline (docs/job-page.md).
//
// The page holds no job data itself, so serving it needs no secret; its
// requests carry the secret given in the URL's fragment (`#token=SECRET`,
// which browsers never send to the server) as `Authorization: Bearer`.
#pragma once

namespace edl::roles::job {

// The page, NUL-terminated.
extern const char kJobPageHtml[];

}  // namespace edl::roles::job
