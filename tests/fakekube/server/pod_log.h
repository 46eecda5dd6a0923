// pods/NAME/log as kube-apiserver and the kubelet answer it:
// container choice and checks, the "waiting to start" refusal,
// tailLines and limitBytes. Socket-free; the server streams `follow=true`
// by calling these again as the log grows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

struct LogOptions {
  std::string container;  // "" = the pod's only container
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> limit_bytes;
  bool follow = false;
};

// The pod, after checking that `options.container` names one of its
// containers and that it has started: 404 for no pod, 400 with the real
// messages otherwise. Fills options.container when it was "".
ApiResult<Json> PodForLog(const Store& store, const std::string& ns, const std::string& name,
                          LogOptions& options);

// The last `tail_lines` lines of `text` (all of it when nullopt).
std::string TailLines(const std::string& text, std::optional<int64_t> tail_lines);

// Whether a followed log is over: the pod is terminal or its container
// terminated.
bool LogFinished(const Json& pod, const std::string& container);

}  // namespace edl::fakekube
