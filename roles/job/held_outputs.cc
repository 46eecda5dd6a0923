#include "roles/job/held_outputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "net/rpc.h"

namespace edl::roles::job {
namespace fs = std::filesystem;
using Json = nlohmann::json;

HeldOutputs::HeldOutputs(std::map<std::string, std::string> outputs)
    : outputs_(std::move(outputs)) {}

void HeldOutputs::Serve(net::RpcServer& server) {
  server.HandleRpc(kOutputsPath, [this](std::string_view) { return List(); });
  server.HandleRpc(kChunkPath, [this](std::string_view body) { return Chunk(body); });
  server.HandleRpc(kFetchedPath, [this](std::string_view) -> Result<std::string> {
    std::lock_guard<std::mutex> lock(mu_);
    fetched_ = true;
    fetched_cv_.notify_all();
    return std::string("released");
  });
}

Status HeldOutputs::Ready() {
  std::vector<HeldFile> files;
  for (const auto& [name, path] : outputs_) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
      const auto size = fs::file_size(path, ec);
      if (ec) return IoError("--" + name + " " + path + ": " + ec.message());
      files.push_back({name, "", path, static_cast<int64_t>(size)});
      continue;
    }
    if (!fs::is_directory(path, ec)) {
      return NotFound("--" + name + " " + path + ": the job wrote no such file or directory");
    }
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const auto size = it->file_size(ec);
      if (ec) break;
      files.push_back({name, fs::relative(it->path(), path, ec).string(), it->path().string(),
                       static_cast<int64_t>(size)});
    }
    if (ec) return IoError("--" + name + " " + path + ": " + ec.message());
  }
  std::sort(files.begin(), files.end(),
            [](const HeldFile& a, const HeldFile& b) { return a.local < b.local; });
  std::lock_guard<std::mutex> lock(mu_);
  files_ = std::move(files);
  ready_ = true;
  return Status::Ok();
}

Result<std::string> HeldOutputs::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ready_) return FailedPrecondition("the job's outputs are not written yet");
  Json files = Json::array();
  for (const HeldFile& f : files_) {
    files.push_back({{"output", f.output}, {"path", f.path}, {"size", f.size}});
  }
  return Json{{"files", files}}.dump();
}

Result<std::vector<HeldFile>> ParseOutputList(const std::string& json,
                                              const std::set<std::string>& outputs) {
  const Json list = Json::parse(json, nullptr, false);
  if (!list.is_object() || !list.value("files", Json()).is_array()) {
    return InvalidArgument("the master's list of outputs is not {\"files\": [...]}: " +
                           json.substr(0, 200));
  }
  std::vector<HeldFile> files;
  for (const Json& f : list["files"]) {
    const bool well_formed = f.is_object() && f.value("output", Json()).is_string() &&
                             f.value("path", Json()).is_string() &&
                             f.value("size", Json()).is_number_integer();
    HeldFile h;
    if (well_formed) {
      h.output = f["output"].get<std::string>();
      h.path = f["path"].get<std::string>();
      h.size = f["size"].get<int64_t>();
    }
    if (!well_formed || !outputs.count(h.output) || !IsPathBelow(h.path) || h.size < 0) {
      return InvalidArgument("the master listed an output file this client cannot take: " +
                             f.dump().substr(0, 200));
    }
    files.push_back(std::move(h));
  }
  return files;
}

bool HeldOutputs::WaitFetched(std::chrono::seconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  fetched_cv_.wait_for(lock, timeout, [this] { return fetched_ || abandoned_; });
  return fetched_;
}

void HeldOutputs::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  abandoned_ = true;
  fetched_cv_.notify_all();
}

Result<std::string> HeldOutputs::Chunk(std::string_view body) const {
  const Json request = Json::parse(body, nullptr, false);
  if (!request.is_object() || !request.value("file", Json()).is_number_integer() ||
      !request.value("offset", Json()).is_number_integer()) {
    return InvalidArgument("output chunk: expected {\"file\": I, \"offset\": N}, got " +
                           std::string(body.substr(0, 200)));
  }
  const int64_t i = request["file"].get<int64_t>();
  const int64_t offset = request["offset"].get<int64_t>();
  HeldFile f;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_) return FailedPrecondition("the job's outputs are not written yet");
    if (i < 0 || i >= static_cast<int64_t>(files_.size())) {
      return InvalidArgument("output chunk: no file " + std::to_string(i));
    }
    f = files_[static_cast<size_t>(i)];
  }
  if (offset < 0 || offset > f.size) {
    return InvalidArgument("output chunk: offset " + std::to_string(offset) + " is outside " +
                           f.local + " (" + std::to_string(f.size) + " bytes)");
  }
  std::ifstream in(f.local, std::ios::binary);
  if (!in) return IoError("cannot open " + f.local);
  std::string bytes(static_cast<size_t>(std::min(kChunkBytes, f.size - offset)), '\0');
  in.seekg(offset);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.gcount() != static_cast<std::streamsize>(bytes.size())) {
    return IoError(f.local + ": short read at " + std::to_string(offset));
  }
  return bytes;
}

}  // namespace edl::roles::job
