// Watching Kubernetes objects (the master's use: docs/kubernetes.md, 'What
// the master does when a pod goes'):
// WatchDecoder turns the bytes of a watch body into events, WatchStream is
// one open watch connection, and Reflector is client-go's list+watch loop
// that survives clean closes, expired resourceVersions and dead connections.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "kube/client.h"

namespace edl::kube {

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type;
  Json object;
  // DELETED synthesized after a relist (object = last known state).
  bool tombstone = false;
};

// "ADDED", "MODIFIED", ... for logs.
const char* WatchEventTypeName(WatchEvent::Type type);

// Byte buffer → events: splits on '\n' over the accumulated bytes (never per
// chunk), so an event may span chunks and a chunk may hold several events;
// UTF-8 is decoded only per complete line. Blank lines are skipped. Not
// thread-safe.
class WatchDecoder {
 public:
  void Feed(std::string_view bytes);
  // Marks the end of input: a last line without '\n' is then decoded too.
  void Finish();
  // The next complete event, nullopt when no complete line is buffered.
  // InvalidArgument naming the line (number and a prefix of it) when a line
  // is not a watch event; that line is consumed.
  Result<std::optional<WatchEvent>> Next();
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  std::string buffer_;
  size_t start_ = 0;  // bytes before this are consumed
  int64_t line_ = 0;  // lines consumed so far
  bool finished_ = false;
};

}  // namespace edl::kube
namespace edl::net {
class HttpConnection;
}  // namespace edl::net
namespace edl::kube {

// One open watch connection (made by Client::Watch). Next() is called from
// one thread; Cancel() may be called from any thread.
class WatchStream {
 public:
  WatchStream(std::unique_ptr<net::HttpConnection> connection, std::string description);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  // Next event; nullopt on a clean end of stream; DeadlineExceeded when
  // nothing (not even a bookmark) arrived within the read deadline;
  // Unavailable when the connection broke or the stream was cancelled;
  // InvalidArgument for an undecodable line. After an error the stream is
  // finished.
  Result<std::optional<WatchEvent>> Next(std::chrono::milliseconds read_deadline);
  // From another thread: aborts a blocked Next() (it returns Unavailable).
  void Cancel();

 private:
  std::unique_ptr<net::HttpConnection> connection_;
  std::string description_;  // "GET /api/v1/...?watch=1..." for messages
  WatchDecoder decoder_;
  std::atomic<bool> cancelled_{false};
  bool ended_ = false;  // the body ended; buffered events are still served
  Status failure_;      // the first error; every later Next() returns it
};

// The list+watch loop (client-go's reflector): list, then watch from the
// LIST's metadata.resourceVersion with bookmarks; every event (bookmarks
// included) updates the last RV; clean close → re-watch from last RV without
// relisting; in-band ERROR 410 (Expired or Gone) → relist and deliver
// ADDED/MODIFIED for changed objects and tombstone DELETEDs for objects (by
// uid) that vanished; read deadline (watch timeout + 30 s) so a half-open
// connection cannot hang it; errors → retry with jittered exponential backoff
// (0.5 s .. 30 s). Handler runs on the reflector's thread.
class Reflector {
 public:
  struct Options {
    Resource resource;
    std::string ns;
    std::string label_selector, field_selector;
    std::chrono::seconds watch_timeout{300};
    std::chrono::milliseconds read_deadline{330000};
  };
  using Handler = std::function<void(const WatchEvent&)>;  // never sees BOOKMARK/ERROR

  // `client` must outlive the reflector.
  Reflector(Client& client, Options options, Handler handler);
  ~Reflector();  // Stop()s
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void Start();  // spawns the thread
  // Cancels the open watch, wakes a backoff and joins; idempotent. A list in
  // flight is waited for (bounded by the client's request_timeout).
  void Stop();
  bool WaitForSync(std::chrono::milliseconds timeout);  // true once the first list was delivered
  std::string last_resource_version() const;
  int64_t relists() const;  // how many lists (for tests)

 private:
  void Run();
  Status ListAndDeliver();
  // Watches once from last RV until the stream ends. Sets *relist when the
  // server said the RV expired; *useful when at least one event arrived.
  Status WatchOnce(bool* relist, bool* useful);
  void Deliver(const WatchEvent& event);
  bool SleepUnlessStopped(std::chrono::milliseconds d);
  void SetLastRv(const std::string& rv);

  Client& client_;
  const Options options_;
  const Handler handler_;
  std::thread thread_;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  bool stop_ = false;
  bool synced_ = false;
  std::string last_rv_;
  int64_t relists_ = 0;
  WatchStream* current_ = nullptr;  // the open watch, for Stop()

  // Reflector thread only: the objects delivered so far by uid.
  std::map<std::string, Json> known_;
};

}  // namespace edl::kube
