// Store: resource versions, history, dispatch to subscribers and garbage
// collection runs (see store.h); objects are written in store_objects.cc and
// deleted in store_delete.cc.
//
// Writes commit under `mu` and queue their events; the writing thread then
// dispatches queued events to subscribers in resource-version order (one
// dispatching thread at a time; a write made from inside a callback leaves
// its event to the thread already dispatching), and finally runs the
// garbage collector over the namespaces the writes touched.
#include <cmath>
#include <ctime>

#include "base/logging.h"
#include "tests/fakekube/server/store_impl.h"

namespace edl::fakekube {
namespace {

thread_local const void* tls_dispatching_store = nullptr;

}  // namespace

using store_internal::Finalizers;
using store_internal::kAllNamespaces;
using store_internal::Key;
using store_internal::Meta;
using store_internal::MetaString;
using store_internal::NowSeconds;
using store_internal::UnknownResource;

std::string Rfc3339(double seconds_since_epoch) {
  std::time_t t = static_cast<std::time_t>(std::floor(seconds_since_epoch));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string Store::Impl::NewUid() {
  static const char kHex[] = "0123456789abcdef";
  std::string uid;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) uid += '-';
    int digit = static_cast<int>(random() & 15);
    if (i == 12) digit = 4;
    if (i == 16) digit = 8 | (digit & 3);
    uid += kHex[digit];
  }
  return uid;
}

void Store::Impl::Record(const std::string& type, const std::string& resource, Json& object,
                         Json previous) {
  const ResourceInfo* info = FindResource(resource);
  object["kind"] = info->kind;
  object["apiVersion"] = info->api_version();
  object["metadata"]["resourceVersion"] = std::to_string(++rv);
  NoteGc(type, *info, object, previous);
  WatchEvent event{type, resource, object, rv, std::move(previous)};
  history.push_back(event);
  while (history.size() > options.history_limit) {
    oldest_servable = history.front().resource_version;
    history.pop_front();
  }
  undispatched.push_back(std::move(event));
}

void Store::Impl::NoteGc(const std::string& type, const ResourceInfo& info, const Json& object,
                         const Json& previous) {
  const std::string ns = info.namespaced ? MetaString(object, "namespace") : kAllNamespaces;
  const Json& meta = Meta(object);
  bool has_refs = meta.contains("ownerReferences") && !meta["ownerReferences"].empty();
  bool relevant = type == "DELETED" || (type == "ADDED" && has_refs);
  if (type == "MODIFIED" && previous.is_object()) {
    const Json& old = Meta(previous);
    relevant = old.value("ownerReferences", Json()) != meta.value("ownerReferences", Json()) ||
               old.value("finalizers", Json()) != meta.value("finalizers", Json());
  }
  if (relevant) gc_pending.insert(ns);
}

void Store::Impl::AfterWrite() {
  Dispatch();
  RunGc();
}

void Store::Impl::Dispatch() {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (dispatching) return;
    dispatching = true;
  }
  for (;;) {
    std::deque<WatchEvent> batch;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (undispatched.empty()) {
        dispatching = false;
        return;
      }
      batch.swap(undispatched);
    }
    std::lock_guard<std::mutex> callbacks(callback_mu);
    const void* outer = tls_dispatching_store;
    tls_dispatching_store = this;
    for (const WatchEvent& event : batch) {
      std::map<uint64_t, Callback> snapshot;
      {
        std::lock_guard<std::mutex> lock(subs_mu);
        snapshot = subs;
      }
      for (auto& [id, callback] : snapshot) {
        {
          std::lock_guard<std::mutex> lock(subs_mu);
          if (!subs.count(id)) continue;  // unsubscribed by an earlier callback
        }
        try {
          callback(event);
        } catch (const std::exception& e) {
          EDL_LOG(ERROR) << "fake kube store: watch callback threw: " << e.what();
        }
      }
    }
    tls_dispatching_store = outer;
  }
}

void Store::Impl::RunGc() {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (gc_running || gc_pending.empty()) return;
    gc_running = true;
  }
  for (;;) {
    std::set<std::string> pending;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (gc_pending.empty()) {
        gc_running = false;
        return;
      }
      pending.swap(gc_pending);
    }
    if (pending.count(kAllNamespaces)) pending = {""};
    for (const std::string& ns : pending) {
      try {
        gc.Collect(ns);
      } catch (const std::exception& e) {
        EDL_LOG(ERROR) << "fake kube garbage collector: " << e.what();
      }
    }
  }
}

Store::Store(Options options) : impl_(std::make_unique<Impl>(*this, options)) {
  // What every cluster has before anyone writes.
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    (void)Create("namespaces", "", Json{{"metadata", {{"name", ns}}}});
  }
  (void)Create("priorityclasses", "",
               Json{{"metadata", {{"name", "system-cluster-critical"}}},
                    {"value", 2000000000},
                    {"description",
                     "Used for system critical pods that must run in the "
                     "cluster, but can be moved to another node if necessary."}});
  (void)Create("priorityclasses", "",
               Json{{"metadata", {{"name", "system-node-critical"}}},
                    {"value", 2000001000},
                    {"description",
                     "Used for system critical pods that must not be moved "
                     "from their current node."}});
}

Store::~Store() = default;

uint64_t Store::Subscribe(Callback callback) {
  std::lock_guard<std::mutex> lock(impl_->subs_mu);
  uint64_t id = impl_->next_sub++;
  impl_->subs.emplace(id, std::move(callback));
  return id;
}

void Store::Unsubscribe(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(impl_->subs_mu);
    impl_->subs.erase(id);
  }
  // Wait for a callback in flight on another thread, so that none runs
  // after this returns (a callback may unsubscribe itself).
  if (tls_dispatching_store != impl_.get()) {
    std::lock_guard<std::mutex> wait(impl_->callback_mu);
  }
}

ApiResult<std::vector<WatchEvent>> Store::EventsSince(const std::string& resource,
                                                      uint64_t resource_version) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (resource_version < impl_->oldest_servable) {
    return ApiResult<std::vector<WatchEvent>>::Err(
        ExpiredError("too old resource version: " + std::to_string(resource_version) + " (" +
                     std::to_string(impl_->oldest_servable) + ")"));
  }
  std::vector<WatchEvent> events;
  for (const WatchEvent& e : impl_->history) {
    if (e.resource_version > resource_version && e.resource == resource) events.push_back(e);
  }
  return ApiResult<std::vector<WatchEvent>>::Ok(std::move(events));
}

uint64_t Store::CurrentResourceVersion() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->rv;
}

void Store::AppendLog(const std::string& uid, const std::string& bytes) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->logs[uid] += bytes;
}

std::string Store::Log(const std::string& uid) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->logs.find(uid);
  return it == impl_->logs.end() ? "" : it->second;
}

}  // namespace edl::fakekube
