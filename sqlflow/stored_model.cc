#include "sqlflow/stored_model.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "base/logging.h"
#include "data/sql_connection.h"
#include "data/sql_url.h"
#include "sqlflow/model_store.h"
#include "sqlflow/select_plan.h"

namespace edl::sqlflow {
namespace {

namespace fs = std::filesystem;

// The URL split into the database (as --database takes it) and the name;
// false when it has no model= parameter.
bool Split(const std::string& url, std::string* database, std::string* name) {
  const size_t q = url.find('?');
  if (q == std::string::npos) return false;
  std::string params;
  bool found = false;
  size_t begin = q + 1;
  while (begin <= url.size()) {
    size_t end = url.find('&', begin);
    if (end == std::string::npos) end = url.size();
    const std::string p = url.substr(begin, end - begin);
    if (p.rfind("model=", 0) == 0) {
      *name = p.substr(6);
      found = true;
    } else if (!p.empty()) {
      params += (params.empty() ? "" : "&") + p;
    }
    begin = end + 1;
  }
  *database = url.substr(0, q) + (params.empty() ? "" : "?" + params);
  return found;
}

// This process's fetched models, removed at exit.
struct Fetched {
  std::mutex mu;
  std::string root;
  std::map<std::string, std::string> dirs;  // url -> directory
};

Fetched& Cache() {
  static Fetched* fetched = [] {
    auto* f = new Fetched();
    std::atexit([] {
      std::error_code ec;
      if (!Cache().root.empty()) fs::remove_all(Cache().root, ec);
    });
    return f;
  }();
  return *fetched;
}

}  // namespace

bool IsStoredModelUrl(const std::string& value) {
  std::string database, name;
  return data::IsSqlUrl(value) && Split(value, &database, &name);
}

std::string StoredModelUrl(const std::string& database, const std::string& name) {
  return database + (database.find('?') == std::string::npos ? "?" : "&") + "model=" + name;
}

Result<std::string> FetchStoredModel(const std::string& url) {
  std::string database, name;
  if (!data::IsSqlUrl(url) || !Split(url, &database, &name)) {
    return InvalidArgument(url + ": not a stored model (DATABASE?model=NAME)");
  }
  EDL_RETURN_IF_ERROR(CheckModelName(name).WithPrefix(url));
  Fetched& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  if (auto it = cache.dirs.find(url); it != cache.dirs.end()) return it->second;
  EDL_ASSIGN_OR_RETURN(data::SqlUrl db_url, DatabaseUrl(database));
  EDL_ASSIGN_OR_RETURN(auto db, data::ConnectSql(db_url));
  EDL_ASSIGN_OR_RETURN(auto store, ModelStore::Open(db_url, db.get(), ""));
  if (cache.root.empty()) {
    char pattern[] = "/tmp/edl-stored-models-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) return IoError("cannot create a directory in /tmp");
    cache.root = pattern;
  }
  const std::string dir = cache.root + "/" + std::to_string(cache.dirs.size()) + "-" + name;
  std::error_code ec;
  fs::remove_all(dir, ec);  // what a failed earlier try left
  EDL_RETURN_IF_ERROR(store->Load(name, dir));
  EDL_LOG(INFO) << "loaded model " << name << " from " << store->where();
  cache.dirs[url] = dir;
  return dir;
}

}  // namespace edl::sqlflow
