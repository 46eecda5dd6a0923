#include <algorithm>
#include <random>

#include "base/logging.h"
#include "kube/watch.h"

namespace edl::kube {
namespace {

constexpr std::chrono::milliseconds kMinBackoff{500};
constexpr std::chrono::milliseconds kMaxBackoff{30000};
// A watch that ends this soon with no event is an error (client-go's "very
// short watch"), so a server that closes at once cannot spin us.
constexpr std::chrono::milliseconds kShortWatch{1000};

std::string StringAt(const Json& j, const char* a, const char* b) {
  auto x = j.find(a);
  if (x == j.end() || !x->is_object()) return "";
  auto y = x->find(b);
  if (y == x->end() || !y->is_string()) return "";
  return y->get<std::string>();
}

// Objects are keyed by uid: a pod relaunched under the same name is another
// object.
std::string KeyOf(const Json& object) {
  std::string uid = StringAt(object, "metadata", "uid");
  if (!uid.empty()) return uid;
  return StringAt(object, "metadata", "namespace") + "/" + StringAt(object, "metadata", "name");
}

bool IsExpired(const ApiError& e) {
  return e.http_code == 410 || e.reason == "Expired" || e.reason == "Gone";
}

}  // namespace

Reflector::Reflector(Client& client, Options options, Handler handler)
    : client_(client), options_(std::move(options)), handler_(std::move(handler)) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  EDL_CHECK(!thread_.joinable()) << "Reflector started twice";
  thread_ = std::thread([this] { Run(); });
}

void Reflector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (current_ != nullptr) current_->Cancel();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Reflector::WaitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return synced_ || stop_; });
  return synced_;
}

std::string Reflector::last_resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_rv_;
}

int64_t Reflector::relists() const {
  std::lock_guard<std::mutex> lock(mu_);
  return relists_;
}

void Reflector::SetLastRv(const std::string& rv) {
  if (rv.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  last_rv_ = rv;
}

bool Reflector::SleepUnlessStopped(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stop_; });
}

void Reflector::Deliver(const WatchEvent& event) {
  if (handler_) handler_(event);
}

Status Reflector::ListAndDeliver() {
  ListOptions o;
  o.label_selector = options_.label_selector;
  o.field_selector = options_.field_selector;
  EDL_ASSIGN_OR_RETURN(Json list, client_.List(options_.resource, options_.ns, o));
  std::map<std::string, Json> fresh;
  if (auto items = list.find("items"); items != list.end() && items->is_array()) {
    for (Json& item : *items) {
      std::string key = KeyOf(item);
      fresh.emplace(std::move(key), std::move(item));
    }
  }
  for (const auto& [key, object] : known_) {
    if (!fresh.count(key)) {
      Deliver(WatchEvent{WatchEvent::Type::kDeleted, object, true});
    }
  }
  for (const auto& [key, object] : fresh) {
    auto old = known_.find(key);
    if (old == known_.end()) {
      Deliver(WatchEvent{WatchEvent::Type::kAdded, object, false});
    } else if (StringAt(old->second, "metadata", "resourceVersion") !=
                   StringAt(object, "metadata", "resourceVersion") ||
               old->second != object) {
      Deliver(WatchEvent{WatchEvent::Type::kModified, object, false});
    }
  }
  known_ = std::move(fresh);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_rv_ = StringAt(list, "metadata", "resourceVersion");
    ++relists_;
    synced_ = true;
  }
  cv_.notify_all();
  return Status::Ok();
}

Status Reflector::WatchOnce(bool* relist, bool* useful) {
  ListOptions o;
  o.label_selector = options_.label_selector;
  o.field_selector = options_.field_selector;
  o.resource_version = last_resource_version();
  Result<std::unique_ptr<WatchStream>> opened =
      client_.Watch(options_.resource, options_.ns, o, options_.watch_timeout, true);
  if (!opened.ok()) {
    std::string reason = KubeReason(opened.status());
    *relist = reason == "Expired" || reason == "Gone";
    return opened.status();
  }
  std::unique_ptr<WatchStream> stream = std::move(*opened);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::Ok();
    current_ = stream.get();
  }
  struct Forget {
    Reflector* r;
    ~Forget() {
      std::lock_guard<std::mutex> lock(r->mu_);
      r->current_ = nullptr;
    }
  } forget{this};
  while (true) {
    Result<std::optional<WatchEvent>> next = stream->Next(options_.read_deadline);
    if (!next.ok()) return next.status();
    if (!next->has_value()) return Status::Ok();  // a clean close
    WatchEvent& event = **next;
    *useful = true;
    switch (event.type) {
      case WatchEvent::Type::kError: {
        ApiError e = DecodeApiError(0, event.object.dump());
        *relist = IsExpired(e);
        return ToStatus("WATCH", CollectionPath(options_.resource, options_.ns), e);
      }
      case WatchEvent::Type::kBookmark:
        SetLastRv(StringAt(event.object, "metadata", "resourceVersion"));
        break;
      case WatchEvent::Type::kAdded:
      case WatchEvent::Type::kModified:
        known_[KeyOf(event.object)] = event.object;
        SetLastRv(StringAt(event.object, "metadata", "resourceVersion"));
        Deliver(event);
        break;
      case WatchEvent::Type::kDeleted:
        known_.erase(KeyOf(event.object));
        SetLastRv(StringAt(event.object, "metadata", "resourceVersion"));
        Deliver(event);
        break;
    }
  }
}

void Reflector::Run() {
  std::minstd_rand rng(std::random_device{}());
  std::chrono::milliseconds backoff = kMinBackoff;
  auto back_off = [&] {
    std::uniform_int_distribution<int64_t> jitter(backoff.count() / 2, backoff.count());
    std::chrono::milliseconds wait(jitter(rng));
    backoff = std::min(backoff * 2, kMaxBackoff);
    return SleepUnlessStopped(wait);
  };
  const std::string what = "kube: reflector " + options_.resource.plural +
                           (options_.ns.empty() ? "" : " in " + options_.ns);
  bool need_list = true;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    if (need_list) {
      Status listed = ListAndDeliver();
      if (!listed.ok()) {
        EDL_LOG(WARNING) << what << ": list failed: " << listed.message();
        if (!back_off()) return;
        continue;
      }
      need_list = false;
    }
    bool relist = false, useful = false;
    auto started = std::chrono::steady_clock::now();
    Status watched = WatchOnce(&relist, &useful);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    if (relist) {
      EDL_LOG(INFO) << what << ": resourceVersion expired, relisting";
      need_list = true;
      continue;
    }
    bool too_short = !useful && std::chrono::steady_clock::now() - started < kShortWatch;
    if (watched.ok() && !too_short) {
      backoff = kMinBackoff;
      continue;  // a clean close: re-watch from the last RV
    }
    EDL_LOG(WARNING) << what << ": watch ended: "
                     << (watched.ok() ? "very short watch with no events" : watched.message());
    if (!back_off()) return;
  }
}

}  // namespace edl::kube
