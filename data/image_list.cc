#include "data/image_list.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "base/file.h"
#include "base/logging.h"
#include "data/categorical.h"
#include "data/csv_reader.h"

namespace edl::data {
namespace {

namespace fs = std::filesystem;

constexpr char kCacheName[] = ".edl-images.lst";
constexpr char kCacheMagic[] = "edl-images 1";

bool Hidden(const std::string& name) { return name.empty() || name[0] == '.' || name[0] == '_'; }

// A class-folder scan: what the cache holds.
struct FolderScan {
  std::vector<std::string> folders;                   // class folders, sorted
  std::vector<std::pair<std::string, int64_t>> dirs;  // every folder below root: mtime (ns)
  std::vector<std::string> files;                     // record order
  std::vector<int64_t> folder_of;                     // per file
};

int64_t MtimeNs(const fs::path& p, std::error_code& ec) {
  return static_cast<int64_t>(fs::last_write_time(p, ec).time_since_epoch().count());
}

// The root's class folders, sorted, and the images at its top.
Status ListRoot(const std::string& root, std::vector<std::string>* folders,
                std::vector<std::string>* top_files) {
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code entry;
    if (Hidden(name)) continue;
    if (it->is_directory(entry)) {
      folders->push_back(name);
    } else if (IsImageFileName(name)) {
      top_files->push_back(name);
    }
  }
  if (ec) return IoError(root + ": cannot list the folder: " + ec.message());
  std::sort(folders->begin(), folders->end());
  std::sort(top_files->begin(), top_files->end());
  return Status::Ok();
}

Result<FolderScan> ScanClassFolders(const std::string& root,
                                    const std::vector<std::string>& folders) {
  FolderScan scan;
  scan.folders = folders;
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t c = 0; c < folders.size(); ++c) {
    const fs::path dir = fs::path(root) / folders[c];
    std::error_code ec;
    scan.dirs.push_back({folders[c], MtimeNs(dir, ec)});
    const size_t before = scan.files.size();
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      // An entry that cannot be examined (a broken link, a link loop) is
      // listed by its name: reading it fails (or is skipped) by name later.
      std::error_code entry;
      const std::string name = it->path().filename().string();
      if (Hidden(name)) {
        if (it->is_directory(entry)) it.disable_recursion_pending();
        continue;
      }
      const std::string rel = it->path().lexically_relative(root).string();
      if (it->is_directory(entry)) {
        scan.dirs.push_back({rel, MtimeNs(it->path(), entry)});
      } else if (IsImageFileName(name)) {
        scan.files.push_back(rel);
        scan.folder_of.push_back(static_cast<int64_t>(c));
      }
    }
    if (ec) return IoError(dir.string() + ": cannot list the folder: " + ec.message());
    if (scan.files.size() == before) {
      return InvalidArgument(dir.string() +
                             ": the class folder holds no images (*.jpg, *.jpeg, *.png); remove "
                             "it or add its images");
    }
  }
  // A fixed order that mixes the classes: by a hash of each path.
  for (size_t i = 0; i < scan.files.size(); ++i) order.push_back({Fnv1a64(scan.files[i]), i});
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : scan.files[a.second] < scan.files[b.second];
  });
  FolderScan sorted = scan;
  for (size_t i = 0; i < order.size(); ++i) {
    sorted.files[i] = scan.files[order[i].second];
    sorted.folder_of[i] = scan.folder_of[order[i].second];
  }
  return sorted;
}

std::string CachePath(const std::string& root, const std::string& index_dir) {
  if (::access(root.c_str(), W_OK) == 0 || index_dir.empty()) {
    return (fs::path(root) / kCacheName).string();
  }
  std::error_code ec;
  const std::string absolute = fs::weakly_canonical(fs::absolute(root, ec), ec).string();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(Fnv1a64(ec ? root : absolute)));
  return (fs::path(index_dir) /
          (std::string(hash) + "-" + fs::path(absolute).filename().string() + ".edlimages"))
      .string();
}

std::string SerializeScan(const FolderScan& s) {
  std::ostringstream out;
  out << kCacheMagic << "\nfolders " << s.folders.size() << "\n";
  for (const auto& f : s.folders) out << f << "\n";
  out << "dirs " << s.dirs.size() << "\n";
  for (const auto& [d, t] : s.dirs) out << t << " " << d << "\n";
  out << "files " << s.files.size() << "\n";
  for (size_t i = 0; i < s.files.size(); ++i) out << s.folder_of[i] << " " << s.files[i] << "\n";
  return out.str();
}

// The cached scan when it parses and every folder in it is unchanged.
std::optional<FolderScan> LoadFreshScan(const std::string& root, const std::string& cache,
                                        const std::vector<std::string>& folders) {
  auto bytes = ReadFile(cache);
  if (!bytes.ok()) return std::nullopt;
  std::istringstream in(*bytes);
  std::string line;
  FolderScan s;
  auto count = [&](const std::string& what) -> int64_t {
    if (!std::getline(in, line) || line.rfind(what + " ", 0) != 0) return -1;
    return std::strtoll(line.c_str() + what.size() + 1, nullptr, 10);
  };
  if (!std::getline(in, line) || line != kCacheMagic) return std::nullopt;
  int64_t n = count("folders");
  for (int64_t i = 0; i < n && std::getline(in, line); ++i) s.folders.push_back(line);
  if (n < 0 || s.folders != folders) return std::nullopt;
  n = count("dirs");
  for (int64_t i = 0; i < n && std::getline(in, line); ++i) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) return std::nullopt;
    std::error_code ec;
    const int64_t t = std::strtoll(line.c_str(), nullptr, 10);
    const std::string d = line.substr(sp + 1);
    if (MtimeNs(fs::path(root) / d, ec) != t || ec) return std::nullopt;
    s.dirs.push_back({d, t});
  }
  if (n < 0 || static_cast<int64_t>(s.dirs.size()) != n) return std::nullopt;
  n = count("files");
  for (int64_t i = 0; i < n && std::getline(in, line); ++i) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) return std::nullopt;
    const int64_t f = std::strtoll(line.c_str(), nullptr, 10);
    if (f < 0 || f >= static_cast<int64_t>(s.folders.size())) return std::nullopt;
    s.folder_of.push_back(f);
    s.files.push_back(line.substr(sp + 1));
  }
  if (n < 0 || static_cast<int64_t>(s.files.size()) != n) return std::nullopt;
  return s;
}

Result<FolderScan> ScanWithCache(const std::string& root, const std::vector<std::string>& folders,
                                 const std::string& index_dir) {
  const std::string cache = CachePath(root, index_dir);
  if (auto fresh = LoadFreshScan(root, cache, folders)) return std::move(*fresh);
  EDL_ASSIGN_OR_RETURN(FolderScan scan, ScanClassFolders(root, folders));
  bool plain = true;
  for (const auto& f : scan.files) plain = plain && f.find('\n') == std::string::npos;
  if (plain) {
    Status saved = WriteFileAtomically(cache, SerializeScan(scan));
    if (!saved.ok()) {
      EDL_LOG(INFO) << root << ": the image list is not cached (" << saved.message()
                    << "); pass --data_index_dir to cache it elsewhere";
    }
  }
  return scan;
}

Status MapClasses(const std::string& where, const std::vector<std::string>& found,
                  const std::vector<std::string>& given, std::vector<int64_t>* id_of_found) {
  for (const std::string& name : found) {
    auto it = std::find(given.begin(), given.end(), name);
    if (it == given.end()) {
      std::string all;
      for (const auto& g : given) all += (all.empty() ? "" : ", ") + g;
      return InvalidArgument(where + ": class \"" + name +
                             "\" is not one of the model's class_names (" + all + ")");
    }
    id_of_found->push_back(it - given.begin());
  }
  return Status::Ok();
}

Result<ImageList> ListFolder(const std::string& root, const std::vector<std::string>& class_names,
                             LabelPolicy labels, const std::string& index_dir) {
  std::vector<std::string> folders, top;
  EDL_RETURN_IF_ERROR(ListRoot(root, &folders, &top));
  ImageList list;
  list.root = root;
  if (folders.empty()) {
    if (top.empty()) {
      return InvalidArgument(root +
                             ": holds no images (*.jpg, *.jpeg, *.png) and no class folders");
    }
    if (labels == LabelPolicy::kRequired) {
      return InvalidArgument(root +
                             ": holds images but no class folders; labeled data needs "
                             "one subfolder per class (" +
                             root + "/<class>/<image>)");
    }
    list.files = std::move(top);
    list.class_names = class_names;
    return list;
  }
  if (!top.empty()) {
    EDL_LOG(WARNING) << root << ": " << top.size()
                     << " image(s) beside the class folders are in no class; left out";
  }
  EDL_ASSIGN_OR_RETURN(FolderScan scan, ScanWithCache(root, folders, index_dir));
  std::vector<int64_t> id_of_folder;
  if (class_names.empty()) {
    list.class_names = folders;
    for (size_t i = 0; i < folders.size(); ++i) id_of_folder.push_back(static_cast<int64_t>(i));
  } else {
    list.class_names = class_names;
    EDL_RETURN_IF_ERROR(MapClasses(root, folders, class_names, &id_of_folder));
  }
  list.files = std::move(scan.files);
  list.labels.reserve(list.files.size());
  for (int64_t f : scan.folder_of) list.labels.push_back(id_of_folder[f]);
  return list;
}

Result<ImageList> ReadListing(const std::string& csv, const std::vector<std::string>& class_names,
                              LabelPolicy labels) {
  EDL_ASSIGN_OR_RETURN(std::string text, ReadFile(csv));
  CsvReader reader(text, ',', csv);
  EDL_ASSIGN_OR_RETURN(bool any, reader.Next());
  if (!any) return InvalidArgument(csv + ": is empty; expected a header row naming \"path\"");
  int path_col = -1, label_col = -1;
  const std::vector<std::string> header = reader.fields();
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "path") path_col = static_cast<int>(i);
    if (header[i] == "label") label_col = static_cast<int>(i);
  }
  if (path_col < 0) {
    return InvalidArgument(csv + ":1: the header names no \"path\" column (expected path,label)");
  }
  if (label_col < 0 && labels == LabelPolicy::kRequired) {
    return InvalidArgument(csv +
                           ":1: the header names no \"label\" column; labeled data needs "
                           "one (path,label)");
  }
  ImageList list;
  list.root = fs::path(csv).parent_path().string();
  if (list.root.empty()) list.root = ".";
  std::vector<std::string> names;
  while (true) {
    EDL_ASSIGN_OR_RETURN(bool more, reader.Next());
    if (!more) break;
    const auto& f = reader.fields();
    if (f.size() != header.size()) {
      return InvalidArgument(reader.Where() + ": has " + std::to_string(f.size()) +
                             " fields but the header has " + std::to_string(header.size()));
    }
    if (f[path_col].empty()) return InvalidArgument(reader.Where() + ": the path is empty");
    list.files.push_back(f[path_col]);
    if (label_col >= 0) {
      if (f[label_col].empty()) return InvalidArgument(reader.Where() + ": the label is empty");
      names.push_back(f[label_col]);
    }
  }
  if (list.files.empty()) return InvalidArgument(csv + ": lists no images");
  if (label_col < 0) {
    list.class_names = class_names;
    return list;
  }
  list.class_names = class_names;
  if (list.class_names.empty()) {
    list.class_names = names;
    std::sort(list.class_names.begin(), list.class_names.end());
    list.class_names.erase(std::unique(list.class_names.begin(), list.class_names.end()),
                           list.class_names.end());
  }
  std::map<std::string, int64_t> id;
  for (size_t i = 0; i < list.class_names.size(); ++i)
    id[list.class_names[i]] = static_cast<int64_t>(i);
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = id.find(names[i]);
    if (it == id.end()) {
      return InvalidArgument(csv + ": row " + std::to_string(i + 1) + " (" + list.files[i] +
                             "): label \"" + names[i] + "\" is not one of the model's class_names");
    }
    list.labels.push_back(it->second);
  }
  return list;
}

}  // namespace

bool IsImageFileName(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || Hidden(name)) return false;
  std::string ext = name.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "jpg" || ext == "jpeg" || ext == "png";
}

Result<ImageList> ListImages(const std::string& path, const std::vector<std::string>& class_names,
                             LabelPolicy labels, const std::string& index_dir) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::string root = path;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    return ListFolder(root, class_names, labels, index_dir);
  }
  if (fs::is_regular_file(path, ec) && IsImageFileName(fs::path(path).filename().string())) {
    if (labels == LabelPolicy::kRequired) {
      return InvalidArgument(path +
                             ": one image has no class; labeled data is a folder with one "
                             "subfolder per class, or a CSV listing (path,label)");
    }
    ImageList one;  // prediction data: one unlabeled image
    one.root = fs::path(path).parent_path().string();
    if (one.root.empty()) one.root = ".";
    one.files.push_back(fs::path(path).filename().string());
    one.class_names = class_names;
    return one;
  }
  if (fs::is_regular_file(path, ec)) {
    std::string lower = path;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!lower.ends_with(".csv")) {
      return InvalidArgument(path +
                             ": is neither a folder of images, a *.csv listing of images "
                             "nor a JPEG or PNG file");
    }
    return ReadListing(path, class_names, labels);
  }
  return NotFound(path + ": no such folder of images or CSV listing of images");
}

Result<std::vector<std::string>> FindImageClassNames(const std::string& path,
                                                     const std::string& index_dir) {
  EDL_ASSIGN_OR_RETURN(ImageList list, ListImages(path, {}, LabelPolicy::kIfPresent, index_dir));
  return list.class_names;
}

}  // namespace edl::data
