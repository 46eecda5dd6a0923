// HeldOutputs: the outputs of a job on Kubernetes that go back to the
// machine that submitted it. `edl train|predict --cluster=kube` with an
// --output on no --volume has the master write it inside its pod; once the
// job succeeded the master serves the files over its RPC port (the job
// secret required) and waits, before its pod ends, until the client fetched
// them through the API server's service proxy (roles/job/kube_fetch.h) or
// a time limit passed (docs/kubernetes.md, "Outputs on your machine").
//
// The RPCs (POST, bodies JSON):
//   kOutputsPath   -> {"files": [{"output": NAME, "path": REL, "size": N}]}
//                     once Ready(); FailedPrecondition before
//   kChunkPath     {"file": I, "offset": N} -> the bytes of file I from N
//                     (at most kChunkBytes; empty at its end)
//   kFetchedPath   -> "released": the master may end
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace edl::net {
class RpcServer;
}

namespace edl::roles::job {

inline constexpr char kOutputsPath[] = "/edl.Control/Outputs";
inline constexpr char kChunkPath[] = "/edl.Control/OutputChunk";
inline constexpr char kFetchedPath[] = "/edl.Control/OutputsFetched";
inline constexpr int64_t kChunkBytes = int64_t{4} << 20;
// Where the master pod writes the outputs it holds (one directory a job).
inline constexpr char kHeldOutputsDir[] = "/tmp/edl-held-outputs";

struct HeldFile {
  std::string output;  // the option's name: "output", "prediction_output"
  std::string path;    // relative to the output ("" when the output is a file)
  std::string local;   // the file in this pod
  int64_t size = 0;
};

// The client's side of kOutputsPath's answer: the files, each checked (an
// output the client asked for, a relative path that stays inside it, a
// size); an error naming the first that is not.
Result<std::vector<HeldFile>> ParseOutputList(const std::string& json,
                                              const std::set<std::string>& outputs);

class HeldOutputs {
 public:
  // `outputs`: option name -> the path in this pod (a file or a directory).
  explicit HeldOutputs(std::map<std::string, std::string> outputs);

  // Registers the RPCs on `server` (before it starts).
  void Serve(net::RpcServer& server);
  // Lists the outputs' files; they are served from now on. An output that
  // is missing is an error naming it.
  Status Ready();
  // Until the client released the master (true), or `timeout` or
  // Abandon() (false).
  bool WaitFetched(std::chrono::seconds timeout);
  // Ends a WaitFetched now (the job is being stopped).
  void Abandon();

  // The RPCs' answers.
  Result<std::string> List() const;
  Result<std::string> Chunk(std::string_view body) const;

 private:
  const std::map<std::string, std::string> outputs_;
  mutable std::mutex mu_;
  std::condition_variable fetched_cv_;
  bool ready_ = false;
  bool fetched_ = false;
  bool abandoned_ = false;
  std::vector<HeldFile> files_;
};

}  // namespace edl::roles::job
