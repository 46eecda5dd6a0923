#include "roles/ps/ps_checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace edl::roles::ps {
namespace fs = std::filesystem;

namespace {

std::string VersionDirName(int64_t v) { return "version-" + std::to_string(v); }

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit);
}

// Parses "ps-<i>-of-<n>".
bool ParsePartitionName(const std::string& name, int* index, int* num_ps) {
  if (name.rfind("ps-", 0) != 0) return false;
  const size_t of = name.find("-of-");
  if (of == std::string::npos) return false;
  const std::string i = name.substr(3, of - 3), n = name.substr(of + 4);
  if (!AllDigits(i) || !AllDigits(n) || i.size() > 6 || n.size() > 6) return false;
  *index = std::stoi(i);
  *num_ps = std::stoi(n);
  return *num_ps >= 1 && *index < *num_ps;
}

// The PS counts for which `version_dir` holds every partition, ascending.
std::vector<int> CompleteSets(const fs::path& version_dir) {
  std::map<int, std::set<int>> present;  // num_ps -> indexes
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(version_dir, ec)) {
    int index, num_ps;
    if (!e.is_directory() || !ParsePartitionName(e.path().filename().string(), &index, &num_ps)) {
      continue;
    }
    if (fs::exists(e.path() / "manifest.json")) present[num_ps].insert(index);
  }
  std::vector<int> out;
  for (const auto& [n, indexes] : present) {
    if (static_cast<int>(indexes.size()) == n) out.push_back(n);
  }
  return out;
}

// All version-N directories under root: version -> path.
std::map<int64_t, fs::path> VersionDirs(const std::string& root) {
  std::map<int64_t, fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("version-", 0) != 0) continue;
    const std::string digits = name.substr(8);
    if (!AllDigits(digits) || digits.size() > 18) continue;
    out[std::stoll(digits)] = e.path();
  }
  return out;
}

}  // namespace

std::string PartitionDirName(int index, int num_ps) {
  return "ps-" + std::to_string(index) + "-of-" + std::to_string(num_ps);
}

std::string PartitionPath(const std::string& root, int64_t version, int index, int num_ps) {
  return (fs::path(root) / VersionDirName(version) / PartitionDirName(index, num_ps)).string();
}

Status WritePartition(const std::string& root, int index, int num_ps, const Checkpoint& partition) {
  const fs::path version_dir = fs::path(root) / VersionDirName(partition.version);
  const fs::path final_dir = version_dir / PartitionDirName(index, num_ps);
  // WriteCheckpoint writes <tmp_root>/version-<V> atomically; that directory
  // is then renamed to the partition's place.
  const fs::path tmp_root =
      version_dir / ("." + PartitionDirName(index, num_ps) + ".tmp." + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(tmp_root, ec);
  EDL_RETURN_IF_ERROR(WriteCheckpoint(tmp_root.string(), partition, 0));
  const fs::path written = tmp_root / VersionDirName(partition.version);
  if (fs::exists(final_dir)) {
    const fs::path old = version_dir / ("." + PartitionDirName(index, num_ps) + ".old");
    fs::remove_all(old, ec);
    fs::rename(final_dir, old, ec);
    fs::remove_all(old, ec);
  }
  fs::rename(written, final_dir, ec);
  const std::string error = ec ? ec.message() : "";
  fs::remove_all(tmp_root, ec);
  if (!error.empty()) {
    return IoError(final_dir.string() + ": cannot rename checkpoint into place: " + error);
  }
  return Status::Ok();
}

std::vector<int64_t> ListCompleteVersions(const std::string& root) {
  std::vector<int64_t> out;
  for (const auto& [version, path] : VersionDirs(root)) {
    if (!CompleteSets(path).empty()) out.push_back(version);
  }
  return out;
}

Result<std::vector<Checkpoint>> ReadPartitions(const std::string& root, int64_t version,
                                               int preferred_num_ps) {
  const fs::path version_dir = fs::path(root) / VersionDirName(version);
  const std::vector<int> sets = CompleteSets(version_dir);
  if (sets.empty()) {
    return NotFound(version_dir.string() +
                    ": not a complete parameter-server checkpoint (expected "
                    "ps-<i>-of-<n> directories for every i < n)");
  }
  int num_ps = sets.back();
  if (std::find(sets.begin(), sets.end(), preferred_num_ps) != sets.end()) {
    num_ps = preferred_num_ps;
  }
  std::vector<Checkpoint> out;
  for (int i = 0; i < num_ps; ++i) {
    auto c = ReadCheckpoint((version_dir / PartitionDirName(i, num_ps)).string());
    if (!c.ok()) return c.status();
    if (c->version != version) {
      return InvalidArgument((version_dir / PartitionDirName(i, num_ps)).string() +
                             ": manifest says version " + std::to_string(c->version) +
                             ", directory " + std::to_string(version));
    }
    out.push_back(std::move(c).value());
  }
  return out;
}

Status PrunePartitions(const std::string& root, int keep_max, int64_t written) {
  if (keep_max <= 0) return Status::Ok();
  const std::vector<int64_t> complete = ListCompleteVersions(root);
  if (complete.empty()) return Status::Ok();
  const std::set<int64_t> kept(
      complete.end() - std::min<size_t>(complete.size(), static_cast<size_t>(keep_max)),
      complete.end());
  const int64_t newest_complete = complete.back();
  Status status = Status::Ok();
  for (const auto& [version, path] : VersionDirs(root)) {
    // Newer than the newest complete version: still being written.
    if (version >= newest_complete || version == written || kept.count(version)) continue;
    // Several PS may prune the same directory at once: what another
    // removed first is not an error.
    std::error_code ec;
    fs::remove_all(path, ec);
    // A file vanishing under remove_all: another PS is deleting the same
    // directory; once more, to delete what is left.
    if (ec == std::errc::no_such_file_or_directory) fs::remove_all(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && fs::exists(path) && status.ok()) {
      status = IoError(path.string() + ": cannot delete old checkpoint: " + ec.message());
    }
  }
  return status;
}

}  // namespace edl::roles::ps
