#include "roles/local/model_export.h"

#include <unistd.h>

#include <filesystem>

#include "nn/keras/tfjs_export.h"

namespace edl::roles {
namespace fs = std::filesystem;

Status ExportModel(const CompiledModel& cm, const std::string& dir) {
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::error_code ec;
  const bool replacing = fs::exists(target, ec);
  if (replacing && !(fs::is_directory(target, ec) && fs::exists(target / "model.json", ec) &&
                     fs::is_directory(target / "checkpoint", ec))) {
    return InvalidArgument("--output " + dir +
                           ": exists and is not an edl export (no model.json and "
                           "checkpoint/); refusing to replace it");
  }
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  const std::string pid = std::to_string(::getpid());
  const fs::path tmp = target.string() + ".tmp." + pid;
  fs::remove_all(tmp, ec);
  // The input section as the job resolved it (image class names included).
  nn::keras::ModelSpec spec = cm.spec;
  if (!spec.input_json.empty()) spec.input_json = data::InputSpecToJson(cm.input);
  Status s = nn::keras::ExportTfjs(*cm.model, spec, tmp.string());
  if (s.ok()) s = WriteCheckpoint((tmp / "checkpoint").string(), cm.MakeCheckpoint(), 0);
  if (!s.ok()) {
    fs::remove_all(tmp, ec);
    return s.WithPrefix("--output " + dir);
  }
  // Swap the new export in; the old one is deleted only once the new one is
  // in place, and restored if the swap fails.
  const fs::path old = target.string() + ".old." + pid;
  if (replacing) {
    fs::rename(target, old, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      return IoError("--output " + dir +
                     ": cannot move the existing export aside: " + ec.message());
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    if (replacing) fs::rename(old, target, ec);
    fs::remove_all(tmp, ec);
    return IoError("--output " + dir + ": cannot rename the export into place: " + why);
  }
  if (replacing) fs::remove_all(old, ec);
  return Status::Ok();
}

}  // namespace edl::roles
