#include "roles/job/prediction_parts.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>
#include <utility>
#include <vector>

#include "base/atomic_file.h"
#include "base/file.h"

namespace edl::roles::job {

namespace fs = std::filesystem;

namespace {

constexpr char kSuccess[] = "_SUCCESS";

// [begin, end) from a part's name; false for any other name.
bool ParsePartName(const std::string& name, int64_t* begin, int64_t* end) {
  if (name.size() != 4 + 1 + 12 + 1 + 12 + 4) return false;
  if (name.compare(0, 5, "part-") != 0 || name[17] != '-' || name.compare(30, 4, ".csv") != 0)
    return false;
  int64_t v[2] = {0, 0};
  for (size_t k = 0; k < 2; ++k) {
    for (size_t i = 5 + 13 * k; i < 17 + 13 * k; ++i) {
      if (name[i] < '0' || name[i] > '9') return false;
      v[k] = v[k] * 10 + (name[i] - '0');
    }
  }
  *begin = v[0];
  *end = v[1];
  return true;
}

// The parts in a directory by begin.
Result<std::map<int64_t, std::pair<int64_t, std::string>>> ListParts(const std::string& dir) {
  std::map<int64_t, std::pair<int64_t, std::string>> parts;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    int64_t b = 0, e = 0;
    if (ParsePartName(name, &b, &e)) parts[b] = {e, it->path().string()};
  }
  if (ec) return IoError(dir + ": cannot list: " + ec.message());
  return parts;
}

}  // namespace

std::string PredictionPartName(int64_t begin, int64_t end) {
  char name[64];
  std::snprintf(name, sizeof name, "part-%012" PRId64 "-%012" PRId64 ".csv", begin, end);
  return name;
}

Result<std::unique_ptr<PredictionParts>> PredictionParts::Open(const std::string& output,
                                                               Formatter format, bool resume) {
  std::error_code ec;
  const bool is_dir = (!output.empty() && output.back() == '/') || fs::is_directory(output, ec);
  std::string dir = is_dir ? output : output + ".parts";
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create the directory: " + ec.message());
  if (!resume) {
    auto stale = ListParts(dir);
    if (!stale.ok()) return stale.status();
    for (const auto& [b, part] : *stale) fs::remove(part.second, ec);
    fs::remove(fs::path(dir) / kSuccess, ec);
  }
  return std::unique_ptr<PredictionParts>(
      new PredictionParts(dir, is_dir ? std::string() : output, std::move(format)));
}

Status PredictionParts::Put(int64_t begin, int64_t end, const tensor::Tensor& rows) {
  const std::string path = dir_ + "/" + PredictionPartName(begin, end);
  return WriteFileAtomically(path, format_(rows));
}

Status PredictionParts::Finish(int64_t records) {
  auto parts = ListParts(dir_);
  if (!parts.ok()) return parts.status();
  int64_t next = 0;
  for (const auto& [b, part] : *parts) {
    if (b != next) break;
    next = part.first;
  }
  if (next != records) {
    auto after = parts->upper_bound(next);
    const int64_t gap_end = after == parts->end() ? records : after->first;
    return FailedPrecondition(dir_ + ": no predictions for records [" + std::to_string(next) +
                              ", " + std::to_string(gap_end) + ") of " + std::to_string(records));
  }
  if (file_.empty()) return WriteFileAtomically(dir_ + "/" + kSuccess, "");

  auto out = AtomicFileWriter::Open(file_);
  if (!out.ok()) return out.status();
  std::vector<char> buf(1 << 20);
  bool first = true;
  for (const auto& [b, part] : *parts) {
    std::ifstream in(part.second, std::ios::binary);
    if (!in) return IoError(part.second + ": cannot open: " + std::strerror(errno));
    if (!first) {
      // Every part repeats the header: keep the first one's only.
      std::string header;
      std::getline(in, header);
    }
    first = false;
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      const std::streamsize n = in.gcount();
      if (n > 0) EDL_RETURN_IF_ERROR((*out)->Append(std::string_view(buf.data(), n)));
    }
    if (in.bad()) return IoError(part.second + ": read failed");
  }
  EDL_RETURN_IF_ERROR((*out)->Commit());
  std::error_code ec;
  fs::remove_all(dir_, ec);  // the output is whole; leftovers only cost space
  return Status::Ok();
}

}  // namespace edl::roles::job
