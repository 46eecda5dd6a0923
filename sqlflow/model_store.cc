#include "sqlflow/model_store.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

#include "base/file.h"

namespace edl::sqlflow {
namespace {

namespace fs = std::filesystem;
using data::SqlConnection;
using data::SqlUrl;

constexpr size_t kPartBytes = 512 << 10;

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

Result<std::string> Unhex(std::string_view hex, const std::string& where) {
  auto digit = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return IoError(where + ": a blob's hex text has odd length");
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return IoError(where + ": a blob's hex text is not hex");
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

// Files under `dir`, relative, in name order.
std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class DatabaseStore : public ModelStore {
 public:
  DatabaseStore(const SqlUrl& url, SqlConnection* db) : url_(url), db_(db) {}

  std::string where() const override { return "table edl_models of " + url_.text; }

  Result<bool> Exists(const std::string& name) override {
    auto row = db_->QueryRow("SELECT name FROM edl_model_info WHERE name = " +
                             SqlConnection::QuoteLiteral(name));
    if (!row.ok() && row.status().code() == StatusCode::kNotFound) return false;  // no table yet
    if (!row.ok()) return row.status();
    return !row->empty();
  }

  Status Save(const std::string& name, const std::string& export_dir, const std::string& statement,
              bool overwrite) override {
    const bool pg = url_.kind == SqlUrl::Kind::kPostgres;
    const std::string blob = pg ? "BYTEA" : "BLOB";
    EDL_RETURN_IF_ERROR(db_->Execute(
        "CREATE TABLE IF NOT EXISTS edl_model_info (name TEXT PRIMARY KEY, statement TEXT NOT "
        "NULL, created TEXT NOT NULL)"));
    EDL_RETURN_IF_ERROR(db_->Execute(
        "CREATE TABLE IF NOT EXISTS edl_models (name TEXT NOT NULL, file TEXT NOT NULL, part "
        "INTEGER NOT NULL, content " +
        blob + " NOT NULL, PRIMARY KEY (name, file, part))"));
    EDL_RETURN_IF_ERROR(db_->Execute("BEGIN"));
    Status s = SaveInTransaction(name, export_dir, statement, overwrite, pg);
    if (!s.ok()) {
      (void)db_->Execute("ROLLBACK");
      return s;
    }
    return db_->Execute("COMMIT");
  }

  Status Load(const std::string& name, const std::string& dir) override {
    EDL_ASSIGN_OR_RETURN(bool exists, Exists(name));
    if (!exists) return NotFound("no model \"" + name + "\" in " + where());
    const std::string hex =
        url_.kind == SqlUrl::Kind::kPostgres ? "encode(content, 'hex')" : "hex(content)";
    EDL_ASSIGN_OR_RETURN(auto rows,
                         db_->Query("SELECT file, " + hex + " FROM edl_models WHERE name = " +
                                    SqlConnection::QuoteLiteral(name) + " ORDER BY file, part"));
    std::string file, bytes;
    auto flush = [&]() -> Status {
      if (file.empty()) return Status::Ok();
      const fs::path path = fs::path(dir) / file;
      std::error_code ec;
      fs::create_directories(path.parent_path(), ec);
      return WriteFileAtomically(path.string(), bytes);
    };
    for (;;) {
      EDL_ASSIGN_OR_RETURN(bool more, rows->Next());
      if (!more) break;
      const std::string f(rows->fields()[0]);
      if (f.empty() || !IsPathBelow(f)) {
        return IoError(where() + ": model \"" + name + "\" names file \"" + f +
                       "\", outside its directory");
      }
      if (f != file) {
        EDL_RETURN_IF_ERROR(flush());
        file = f;
        bytes.clear();
      }
      EDL_ASSIGN_OR_RETURN(std::string part, Unhex(rows->fields()[1], where()));
      bytes += part;
    }
    return flush();
  }

 private:
  Status SaveInTransaction(const std::string& name, const std::string& export_dir,
                           const std::string& statement, bool overwrite, bool pg) {
    EDL_ASSIGN_OR_RETURN(bool exists, Exists(name));
    if (exists && !overwrite) {
      return AlreadyExists("model \"" + name + "\" already exists in " + where() +
                           " (give --overwrite to replace it)");
    }
    const std::string lit = SqlConnection::QuoteLiteral(name);
    EDL_RETURN_IF_ERROR(db_->Execute("DELETE FROM edl_models WHERE name = " + lit));
    EDL_RETURN_IF_ERROR(db_->Execute("DELETE FROM edl_model_info WHERE name = " + lit));
    EDL_RETURN_IF_ERROR(db_->Execute("INSERT INTO edl_model_info VALUES (" + lit + ", " +
                                     SqlConnection::QuoteLiteral(statement) + ", " +
                                     (pg ? "CAST(now() AS text)" : "datetime('now')") + ")"));
    for (const std::string& file : Files(export_dir)) {
      EDL_ASSIGN_OR_RETURN(std::string bytes, ReadFile(export_dir + "/" + file));
      for (size_t at = 0, part = 0; at < bytes.size() || part == 0; at += kPartBytes, ++part) {
        const std::string hex = Hex(std::string_view(bytes).substr(at, kPartBytes));
        const std::string value = pg ? "decode('" + hex + "', 'hex')" : "X'" + hex + "'";
        EDL_RETURN_IF_ERROR(db_->Execute("INSERT INTO edl_models VALUES (" + lit + ", " +
                                         SqlConnection::QuoteLiteral(file) + ", " +
                                         std::to_string(part) + ", " + value + ")"));
      }
    }
    return Status::Ok();
  }

  SqlUrl url_;
  SqlConnection* db_;
};

class DirectoryStore : public ModelStore {
 public:
  explicit DirectoryStore(std::string dir) : dir_(std::move(dir)) {}
  std::string where() const override { return dir_; }

  Result<bool> Exists(const std::string& name) override { return fs::exists(dir_ + "/" + name); }

  Status Save(const std::string& name, const std::string& export_dir, const std::string&,
              bool overwrite) override {
    const std::string target = dir_ + "/" + name;
    if (fs::exists(target) && !overwrite) {
      return AlreadyExists("model \"" + name + "\" already exists in " + dir_ +
                           " (give --overwrite to replace it)");
    }
    std::error_code ec;
    fs::create_directories(dir_, ec);
    const std::string staged = dir_ + "/." + name + ".new";
    fs::remove_all(staged, ec);
    fs::copy(export_dir, staged, fs::copy_options::recursive, ec);
    if (ec) return IoError(staged + ": cannot copy the model there: " + ec.message());
    const std::string old = dir_ + "/." + name + ".old";
    fs::remove_all(old, ec);
    if (fs::exists(target)) fs::rename(target, old, ec);
    fs::rename(staged, target, ec);
    if (ec) return IoError(target + ": cannot move the model into place: " + ec.message());
    fs::remove_all(old, ec);
    return Status::Ok();
  }

  Status Load(const std::string& name, const std::string& dir) override {
    const std::string source = dir_ + "/" + name;
    if (!fs::exists(source)) return NotFound("no model \"" + name + "\" in " + dir_);
    std::error_code ec;
    fs::copy(source, dir, fs::copy_options::recursive, ec);
    if (ec) return IoError(dir + ": cannot copy model \"" + name + "\" there: " + ec.message());
    return Status::Ok();
  }

 private:
  std::string dir_;
};

}  // namespace

Status CheckModelName(const std::string& name) {
  bool ok = !name.empty() && name[0] != '.' && name.size() <= 200;
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  }
  if (!ok) {
    return InvalidArgument("model name \"" + name +
                           "\": use letters, digits, '_', '-' and '.' (not first)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<ModelStore>> ModelStore::Open(const SqlUrl& url, SqlConnection* db,
                                                     const std::string& model_dir) {
  if (!model_dir.empty()) return std::unique_ptr<ModelStore>(new DirectoryStore(model_dir));
  return std::unique_ptr<ModelStore>(new DatabaseStore(url, db));
}

}  // namespace edl::sqlflow
