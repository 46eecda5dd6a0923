// Private to store*.cc: the Store's state and the helpers its files share.
// Everything in Store::Impl below `mu` is guarded by it unless noted.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/gc.h"
#include "tests/fakekube/server/loopback_block.h"
#include "tests/fakekube/server/resources.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {
namespace store_internal {

constexpr char kAllNamespaces[] = "*";

inline double NowSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

inline uint64_t WallClockMicros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

inline std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

inline const Json& Meta(const Json& object) { return object["metadata"]; }

inline std::string MetaString(const Json& object, const char* key) {
  const Json& meta = Meta(object);
  auto it = meta.find(key);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

inline Json Finalizers(const Json& object) {
  const Json& meta = Meta(object);
  auto it = meta.find("finalizers");
  return it != meta.end() && it->is_array() ? *it : Json::array();
}

inline ApiError UnknownResource() { return PathNotFound(); }

}  // namespace store_internal

struct Store::Impl {
  explicit Impl(Store& store, Options o) : options(o), gc(store) {}

  // REQUIRES: mu held. Assigns the next resource version to `object`,
  // records the event in the history and the dispatch queue.
  void Record(const std::string& type, const std::string& resource, Json& object,
              Json previous = Json());
  void NoteGc(const std::string& type, const ResourceInfo& info, const Json& object,
              const Json& previous);
  std::string NewUid();
  // Dispatches queued events, then collects garbage (no lock held).
  void AfterWrite();
  void Dispatch();
  void RunGc();

  // REQUIRES: mu held. Removes the object (DELETED) and returns its last state.
  Json EraseLocked(const ResourceInfo& info, const std::string& key);
  // REQUIRES: mu held. The finalizer/deletion rules shared by Update and
  // Remove: an object marked for deletion with no finalizers left, whose
  // grace is over (non-pods always), goes away.
  bool ReadyToErase(const ResourceInfo& info, const Json& object) const;

  const Options options;
  GarbageCollector gc;

  mutable std::mutex mu;  // guards everything below up to `subs_mu`
  uint64_t rv = store_internal::WallClockMicros();
  uint64_t oldest_servable = rv;                               // EventsSince(N) works for N >= this
  std::map<std::string, std::map<std::string, Json>> objects;  // resource -> ns/name
  std::deque<WatchEvent> history;
  std::deque<WatchEvent> undispatched;
  bool dispatching = false;
  std::set<std::string> gc_pending;  // namespaces, or kAllNamespaces
  bool gc_running = false;
  std::map<std::string, std::string> logs;  // pod uid -> bytes
  uint32_t next_cluster_ip = 10;
  LoopbackBlock cluster_ips;  // Service cluster IPs: <prefix>x.y
  std::mt19937_64 random{std::random_device{}()};

  std::mutex subs_mu;  // guards subs, next_sub
  std::map<uint64_t, Callback> subs;
  uint64_t next_sub = 1;
  std::mutex callback_mu;  // held by the dispatching thread while it calls back
};

}  // namespace edl::fakekube
