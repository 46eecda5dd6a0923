#include "roles/local/checkpoint.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/file.h"

namespace edl::roles {
namespace fs = std::filesystem;
using nlohmann::json;
using tensor::DType;
using tensor::Tensor;

namespace {

constexpr const char* kFormat = "edl-checkpoint-1";

std::string VersionDirName(int64_t v) { return "version-" + std::to_string(v); }

uint32_t Crc(const void* p, size_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; feed large buffers in pieces.
  const Bytef* b = static_cast<const Bytef*>(p);
  while (n > 0) {
    uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    c = crc32(c, b, chunk);
    b += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

Result<DType> ParseDType(const std::string& s) {
  for (DType d : {DType::kFloat32, DType::kInt64, DType::kUInt8}) {
    if (s == tensor::DTypeName(d)) return d;
  }
  return InvalidArgument("unknown dtype \"" + s + "\"");
}

void AppendGroup(const std::string& group, const std::vector<NamedTensor>& ts, json* entries,
                 std::string* blob) {
  for (const NamedTensor& t : ts) {
    const Tensor& v = t.value;
    size_t offset = blob->size();
    blob->append(static_cast<const char*>(v.raw_data()), v.bytes());
    entries->push_back({{"name", t.name},
                        {"group", group},
                        {"shape", v.shape()},
                        {"dtype", tensor::DTypeName(v.dtype())},
                        {"offset", offset},
                        {"bytes", v.bytes()},
                        {"crc32", Crc(v.raw_data(), v.bytes())}});
  }
}

Status Prune(const std::string& root, int keep_max) {
  if (keep_max <= 0) return Status::Ok();
  std::vector<int64_t> versions = ListCheckpointVersions(root);
  std::error_code ec;
  for (size_t i = 0; i + keep_max < versions.size(); ++i) {
    fs::remove_all(fs::path(root) / VersionDirName(versions[i]), ec);
    if (ec)
      return IoError(root + ": cannot delete old checkpoint " + VersionDirName(versions[i]) + ": " +
                     ec.message());
  }
  return Status::Ok();
}

}  // namespace

std::vector<int64_t> ListCheckpointVersions(const std::string& root) {
  std::vector<int64_t> versions;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("version-", 0) != 0) continue;
    const std::string digits = name.substr(8);
    int64_t version = 0;
    auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
    if (digits.empty() || err != std::errc() || end != digits.data() + digits.size()) continue;
    if (!fs::exists(e.path() / "manifest.json", ec)) continue;
    versions.push_back(version);
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

Status WriteCheckpoint(const std::string& root, const Checkpoint& c, int keep_max) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return IoError(root + ": cannot create checkpoint directory: " + ec.message());

  json entries = json::array();
  std::string blob;
  AppendGroup("model", c.model, &entries, &blob);
  AppendGroup("optimizer", c.optimizer, &entries, &blob);
  json spec = json::parse(c.model_spec_json.empty() ? "null" : c.model_spec_json, nullptr,
                          /*allow_exceptions=*/false);
  json opt = json::parse(c.optimizer_json.empty() ? "null" : c.optimizer_json, nullptr, false);
  json manifest = {{"format", kFormat},         {"version", c.version}, {"epoch", c.epoch},
                   {"model_spec", spec},        {"optimizer", opt},     {"tensors", entries},
                   {"data_file", "tensors.bin"}};

  const fs::path final_dir = fs::path(root) / VersionDirName(c.version);
  const fs::path tmp_dir =
      fs::path(root) / ("." + VersionDirName(c.version) + ".tmp." + std::to_string(::getpid()));
  fs::remove_all(tmp_dir, ec);
  fs::create_directories(tmp_dir, ec);
  if (ec) return IoError(tmp_dir.string() + ": cannot create: " + ec.message());
  Status s = WriteFileAtomically((tmp_dir / "tensors.bin").string(), blob);
  if (s.ok()) s = WriteFileAtomically((tmp_dir / "manifest.json").string(), manifest.dump(1));
  if (!s.ok()) {
    fs::remove_all(tmp_dir, ec);
    return s;
  }
  if (fs::exists(final_dir)) {
    const fs::path old = fs::path(root) / ("." + VersionDirName(c.version) + ".old");
    fs::remove_all(old, ec);
    fs::rename(final_dir, old, ec);
    if (!ec) fs::remove_all(old, ec);
  }
  fs::rename(tmp_dir, final_dir, ec);
  if (ec) {
    fs::remove_all(tmp_dir, ec);
    return IoError(final_dir.string() + ": cannot rename checkpoint into place");
  }
  return Prune(root, keep_max);
}

Result<Checkpoint> ReadCheckpoint(const std::string& path) {
  fs::path dir = path;
  // An export directory (roles/local/model_export.h) keeps its checkpoint inside.
  std::error_code ec;
  if (!fs::exists(dir / "manifest.json", ec) && fs::is_directory(dir / "checkpoint", ec)) {
    dir = dir / "checkpoint";
  }
  if (!fs::exists(dir / "manifest.json", ec)) {
    std::vector<int64_t> versions = ListCheckpointVersions(dir.string());
    if (versions.empty()) {
      return NotFound(path +
                      ": no checkpoint here (expected manifest.json or "
                      "version-N directories)");
    }
    dir = dir / VersionDirName(versions.back());
  }
  const std::string manifest_path = (dir / "manifest.json").string();
  EDL_ASSIGN_OR_RETURN(std::string text, ReadFile(manifest_path));
  json m = json::parse(text, nullptr, false);
  if (m.is_discarded() || !m.is_object()) {
    return InvalidArgument(manifest_path + ": not valid JSON");
  }
  if (m.value("format", "") != kFormat) {
    return InvalidArgument(manifest_path + ": format must be \"" + std::string(kFormat) + "\"");
  }
  const std::string data_path = (dir / m.value("data_file", "tensors.bin")).string();
  EDL_ASSIGN_OR_RETURN(std::string blob, ReadFile(data_path));

  Checkpoint c;
  try {
    c.version = m.at("version").get<int64_t>();
    c.epoch = m.value("epoch", int64_t{0});
    if (!m["model_spec"].is_null()) c.model_spec_json = m["model_spec"].dump();
    if (!m["optimizer"].is_null()) c.optimizer_json = m["optimizer"].dump();
    const json& tensors = m.at("tensors");
    for (size_t i = 0; i < tensors.size(); ++i) {
      const json& e = tensors[i];
      const std::string where = manifest_path + ": tensors[" + std::to_string(i) + "]";
      std::string name = e.at("name").get<std::string>();
      auto dtype = ParseDType(e.at("dtype").get<std::string>());
      if (!dtype.ok()) return dtype.status().WithPrefix(where);
      tensor::Shape shape = e.at("shape").get<tensor::Shape>();
      size_t offset = e.at("offset").get<size_t>();
      size_t bytes = e.at("bytes").get<size_t>();
      // Check the shape against the bytes present before allocating for it.
      uint64_t numel = 1;
      bool too_big = false;
      for (int64_t d : shape) {
        if (d < 0) return InvalidArgument(where + " (" + name + "): negative dimension");
        if (d > 0 && numel > (uint64_t{1} << 62) / static_cast<uint64_t>(d)) too_big = true;
        numel *= static_cast<uint64_t>(d);
      }
      if (too_big || numel * tensor::DTypeSize(*dtype) != bytes) {
        return InvalidArgument(where + " (" + name + "): shape " + tensor::ShapeString(shape) +
                               " does not match its " + std::to_string(bytes) + " bytes");
      }
      if (offset > blob.size() || bytes > blob.size() - offset) {
        return InvalidArgument(data_path + ": truncated: tensor \"" + name + "\" needs bytes [" +
                               std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                               ") of " + std::to_string(blob.size()));
      }
      Tensor t = Tensor::Empty(shape, *dtype);
      if (t.bytes() != bytes) {
        return InvalidArgument(where + " (" + name + "): shape " + tensor::ShapeString(shape) +
                               " needs " + std::to_string(t.bytes()) + " bytes, manifest says " +
                               std::to_string(bytes));
      }
      if (offset > blob.size() || bytes > blob.size() - offset) {
        return InvalidArgument(data_path + ": truncated: tensor \"" + name + "\" needs bytes [" +
                               std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                               ") of " + std::to_string(blob.size()));
      }
      if (bytes) std::memcpy(t.raw_data(), blob.data() + offset, bytes);
      if (Crc(t.raw_data(), bytes) != e.at("crc32").get<uint32_t>()) {
        return InvalidArgument(data_path + ": checksum mismatch in tensor \"" + name +
                               "\" (file corrupt)");
      }
      std::string group = e.at("group").get<std::string>();
      if (group == "model") {
        c.model.push_back({name, t});
      } else if (group == "optimizer") {
        c.optimizer.push_back({name, t});
      } else {
        return InvalidArgument(where + ": unknown group \"" + group + "\"");
      }
    }
  } catch (const json::exception& e) {
    return InvalidArgument(manifest_path + ": malformed manifest: " + e.what());
  }
  return c;
}

namespace {

struct CheckpointFetcher {
  std::function<bool(const std::string&)> recognizes;
  std::function<Result<std::string>(const std::string&)> fetch;
};

CheckpointFetcher& Fetcher() {
  static CheckpointFetcher fetcher;
  return fetcher;
}

}  // namespace

void SetCheckpointFetcher(std::function<bool(const std::string&)> recognizes,
                          std::function<Result<std::string>(const std::string&)> fetch) {
  Fetcher() = {std::move(recognizes), std::move(fetch)};
}

Result<std::string> LocalCheckpointPath(const std::string& path) {
  const CheckpointFetcher& f = Fetcher();
  if (path.empty() || !f.recognizes || !f.recognizes(path)) return path;
  auto local = f.fetch(path);
  if (!local.ok()) return local.status().WithPrefix("--checkpoint_dir_for_init");
  return local;
}

bool IsSingleProcessCheckpoint(const std::string& path) {
  return !path.empty() && ReadCheckpoint(path).ok();
}

}  // namespace edl::roles
