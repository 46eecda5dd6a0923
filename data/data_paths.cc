#include "data/data_paths.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

namespace edl::data {
namespace {

namespace fs = std::filesystem;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One name per format, for messages (CSV and TSV are one format).
std::string Family(const std::string& path) {
  switch (FileKindFromName(path)) {
    case FileKind::kCsv:
    case FileKind::kTsv: return "csv";
    case FileKind::kTfRecord: return "tfrecord";
    case FileKind::kIdx: return "idx";
    case FileKind::kUnknown: break;
  }
  return "";
}

bool IsDataFileName(const std::string& name) {
  if (name.empty() || name[0] == '.' || name[0] == '_') return false;
  return name.find("-labels-") == std::string::npos || Family(name) != "idx";
}

Result<std::vector<std::string>> DirectoryFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const std::string name = it->path().filename().string();
    if (IsDataFileName(name)) files.push_back(it->path().string());
  }
  if (ec) return IoError(dir + ": cannot list the directory: " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) return InvalidArgument(dir + ": the directory holds no data files");
  std::set<std::string> families;
  for (const std::string& f : files) families.insert(Family(f));
  if (families.size() > 1) {
    std::string kinds;
    for (const std::string& f : families)
      kinds += (kinds.empty() ? "" : ", ") + (f.empty() ? "unknown" : f);
    return InvalidArgument(dir + ": the directory mixes data formats (" + kinds +
                           "); give the files of one format, e.g. " + dir + "/*.csv");
  }
  return files;
}

bool HasGlobCharacters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

FileKind FileKindFromName(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (EndsWith(name, ".gz")) name.resize(name.size() - 3);
  if (EndsWith(name, ".csv") || EndsWith(name, ".txt")) return FileKind::kCsv;
  if (EndsWith(name, ".tsv")) return FileKind::kTsv;
  if (EndsWith(name, ".tfrecord") || EndsWith(name, ".tfrecords") || EndsWith(name, ".tfr")) {
    return FileKind::kTfRecord;
  }
  if (EndsWith(name, "-ubyte") || EndsWith(name, ".idx")) return FileKind::kIdx;
  return FileKind::kUnknown;
}

Result<std::vector<std::string>> ResolveDataPaths(const std::string& value) {
  std::vector<std::string> out;
  std::stringstream in(value);
  std::string part;
  std::vector<std::string> parts;
  while (std::getline(in, part, ',')) parts.push_back(part);
  if (!value.empty() && value.back() == ',') parts.push_back("");
  if (parts.empty()) return InvalidArgument("no data path given");
  for (const std::string& p : parts) {
    if (p.empty()) return InvalidArgument("\"" + value + "\": an empty path in the list");
    std::error_code exists_ec;
    if (HasGlobCharacters(p) && !fs::exists(p, exists_ec)) {
      glob_t g{};
      const int rc = ::glob(p.c_str(), 0, nullptr, &g);
      std::vector<std::string> matched;
      if (rc == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) {
          const std::string m = g.gl_pathv[i];
          std::error_code type_ec;
          if (fs::is_regular_file(m, type_ec) && IsDataFileName(fs::path(m).filename().string())) {
            matched.push_back(m);
          }
        }
      }
      globfree(&g);
      if (matched.empty()) return NotFound(p + ": the pattern matches no data file");
      out.insert(out.end(), matched.begin(), matched.end());  // glob sorts them
      continue;
    }
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status)) return NotFound(p + ": no such file or directory");
    if (fs::is_directory(status)) {
      EDL_ASSIGN_OR_RETURN(std::vector<std::string> files, DirectoryFiles(p));
      out.insert(out.end(), files.begin(), files.end());
    } else {
      out.push_back(p);
    }
  }
  std::set<std::string> seen;
  for (const std::string& f : out) {
    std::error_code ec;
    const std::string key = fs::weakly_canonical(f, ec).string();
    if (!seen.insert(ec ? f : key).second) {
      return InvalidArgument("\"" + value + "\" names " + f +
                             " twice (its records would be counted twice)");
    }
  }
  return out;
}

}  // namespace edl::data
