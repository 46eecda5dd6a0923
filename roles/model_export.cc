#include "roles/model_export.h"

#include <unistd.h>

#include <filesystem>

#include "nn/keras/tfjs_export.h"

namespace edl::roles {
namespace fs = std::filesystem;

Status ExportModel(const CompiledModel& cm, const std::string& dir) {
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::error_code ec;
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  Status s = nn::keras::ExportTfjs(*cm.model, cm.spec, tmp.string());
  if (s.ok()) s = WriteCheckpoint((tmp / "checkpoint").string(), cm.MakeCheckpoint(), 0);
  if (!s.ok()) {
    fs::remove_all(tmp, ec);
    return s.WithPrefix("--output " + dir);
  }
  if (fs::exists(target)) {
    const fs::path old = target.string() + ".old." + std::to_string(::getpid());
    fs::rename(target, old, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      return IoError("--output " + dir + ": cannot replace the existing export");
    }
    fs::remove_all(old, ec);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    return IoError("--output " + dir + ": cannot rename the export into place: " +
                   ec.message());
  }
  return Status::Ok();
}

}  // namespace edl::roles
