// ApiServer's long answers (api_server_impl.h): a watch, a chunked stream
// of the store's events, and a followed pod log. Both keep their
// connection until the client or the server ends them.
#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/ssl.hpp>

#include "tests/fakekube/server/api_errors.h"
#include "tests/fakekube/server/api_server_impl.h"
#include "tests/fakekube/server/pod_log.h"

namespace edl::fakekube {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLogPollInterval = std::chrono::milliseconds(100);

}  // namespace

template <class Stream>
asio::awaitable<bool> ApiServer::Impl::Watch(Stream& stream, unsigned version, bool keep_alive,
                                             const WatchPlan& plan, const ResourceInfo& resource) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  auto queue = std::make_shared<WatchQueue>();
  queue->executor = executor;
  queue->timer = &timer;
  const uint64_t subscription =
      store.Subscribe([queue, name = resource.name](const WatchEvent& event) {
        std::lock_guard<std::mutex> lock(queue->mu);
        if (queue->closed) return;
        queue->last_seen_rv = std::max(queue->last_seen_rv, event.resource_version);
        if (event.resource != name) return;
        queue->events.push_back(event);
        queue->Wake();
      });
  {
    std::lock_guard<std::mutex> lock(watches_mu);
    watches.insert(queue);
  }
  // Ends the subscription however the coroutine ends (even destroyed by Stop()).
  struct Registration {
    Impl& impl;
    std::shared_ptr<WatchQueue> queue;
    uint64_t subscription;
    ~Registration() {
      queue->Close();
      impl.store.Unsubscribe(subscription);
      std::lock_guard<std::mutex> lock(impl.watches_mu);
      impl.watches.erase(queue);
    }
  } registration{*this, queue, subscription};

  std::vector<std::string> initial;
  uint64_t delivered = 0;
  if (!plan.since) {
    auto list = store.List(resource.name, plan.ns, "", "");
    if (!list.ok())
      co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(list.error));
    for (Json& item : list.value->items) {
      if (plan.filter->Matches(item)) initial.push_back(plan.filter->AddedLine(std::move(item)));
    }
    delivered = list.value->resource_version;
  } else {
    auto events = store.EventsSince(resource.name, *plan.since);
    if (!events.ok()) {
      // Too old: one in-band ERROR event, then the end (cacher newErrWatcher).
      // (No co_await inside && or ?: : GCC 12 miscompiles them.)
      if (!co_await WriteChunkedHeader(stream, version, keep_alive, "application/json")) {
        co_return false;
      }
      if (!co_await WriteChunk(stream, ErrorLine(events.error))) co_return false;
      const bool ended = co_await WriteLastChunk(stream);
      co_return ended&& keep_alive;
    }
    delivered = *plan.since;
    for (const WatchEvent& event : *events.value) {
      if (auto line = plan.filter->Translate(event)) initial.push_back(std::move(*line));
      delivered = std::max(delivered, event.resource_version);
    }
  }
  if (!co_await WriteChunkedHeader(stream, version, keep_alive, "application/json")) {
    co_return false;
  }
  for (const std::string& line : initial) {
    if (!co_await WriteChunk(stream, line)) co_return false;
  }
  const auto deadline = Clock::now() + plan.timeout;
  auto next_bookmark = Clock::now() + options.bookmark_interval;
  for (;;) {
    std::deque<WatchEvent> batch;
    uint64_t seen;
    bool cut;
    {
      std::lock_guard<std::mutex> lock(queue->mu);
      batch.swap(queue->events);
      seen = queue->last_seen_rv;
      cut = queue->cut;
    }
    if (cut) {  // as a restart or a broken network cuts it: no last chunk
      beast::error_code ec;
      beast::get_lowest_layer(stream).socket().close(ec);
      co_return false;
    }
    for (const WatchEvent& event : batch) {
      if (event.resource_version <= delivered) continue;  // already replayed or listed
      delivered = event.resource_version;
      if (auto line = plan.filter->Translate(event)) {
        if (!co_await WriteChunk(stream, *line)) co_return false;
      }
    }
    const auto now = Clock::now();
    const uint64_t bookmark_rv = std::max(delivered, seen);
    if (now >= deadline) {
      if (plan.bookmarks) {
        if (!co_await WriteChunk(stream, plan.filter->BookmarkLine(bookmark_rv))) co_return false;
      }
      break;
    }
    if (plan.bookmarks && now >= next_bookmark) {
      if (!co_await WriteChunk(stream, plan.filter->BookmarkLine(bookmark_rv))) co_return false;
      next_bookmark = now + options.bookmark_interval;
    }
    timer.expires_at(plan.bookmarks ? std::min(deadline, next_bookmark) : deadline);
    {
      std::lock_guard<std::mutex> lock(queue->mu);
      if (!queue->events.empty()) continue;
    }
    beast::error_code ec;
    co_await timer.async_wait(Redirect(ec));  // cancelled by Wake()
  }
  const bool ended = co_await WriteLastChunk(stream);
  co_return ended&& keep_alive;
}

template <class Stream>
asio::awaitable<bool> ApiServer::Impl::FollowLog(Stream& stream, unsigned version, bool keep_alive,
                                                 const ParsedTarget& target,
                                                 const ResourcePath& path,
                                                 AuditEvent& audit_event) {
  LogOptions options;
  options.container = QueryString(target, "container");
  options.tail_lines = QueryInt(target, "tailLines");
  options.limit_bytes = QueryInt(target, "limitBytes");
  options.follow = true;
  auto pod = PodForLog(store, path.ns, path.name, options);
  audit_event.code = pod.ok() ? 200 : pod.error.code;
  audit.Record(audit_event);
  if (!pod.ok()) {
    co_return co_await WriteResponse(stream, version, keep_alive, ErrorResponse(pod.error));
  }
  const std::string uid = (*pod.value)["metadata"].value("uid", "");
  std::optional<size_t> budget;
  if (options.limit_bytes && *options.limit_bytes >= 0) budget = *options.limit_bytes;
  auto send = [&](std::string text) -> asio::awaitable<bool> {
    if (budget) {
      if (text.size() > *budget) text.resize(*budget);
      *budget -= text.size();
    }
    co_return co_await WriteChunk(stream, text);
  };
  if (!co_await WriteChunkedHeader(stream, version, keep_alive, "text/plain")) co_return false;
  std::string log = store.Log(uid);
  size_t offset = log.size();
  if (!co_await send(TailLines(log, options.tail_lines))) co_return false;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    auto current = store.Get("pods", path.ns, path.name);
    const bool over = !current.ok() || (*current.value)["metadata"].value("uid", "") != uid ||
                      LogFinished(*current.value, options.container);
    log = store.Log(uid);
    if (log.size() > offset) {
      if (!co_await send(log.substr(offset))) co_return false;
      offset = log.size();
    }
    if (over || (budget && *budget == 0)) break;
    timer.expires_after(kLogPollInterval);
    beast::error_code ec;
    co_await timer.async_wait(Redirect(ec));
  }
  const bool ended = co_await WriteLastChunk(stream);
  co_return ended&& keep_alive;
}

// Dispatch (api_server_connection.cc) calls these for both kinds of stream.
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
template asio::awaitable<bool> ApiServer::Impl::Watch<beast::tcp_stream>(beast::tcp_stream&,
                                                                         unsigned, bool,
                                                                         const WatchPlan&,
                                                                         const ResourceInfo&);
template asio::awaitable<bool> ApiServer::Impl::Watch<TlsStream>(TlsStream&, unsigned, bool,
                                                                 const WatchPlan&,
                                                                 const ResourceInfo&);
template asio::awaitable<bool> ApiServer::Impl::FollowLog<beast::tcp_stream>(
    beast::tcp_stream&, unsigned, bool, const ParsedTarget&, const ResourcePath&, AuditEvent&);
template asio::awaitable<bool> ApiServer::Impl::FollowLog<TlsStream>(TlsStream&, unsigned, bool,
                                                                     const ParsedTarget&,
                                                                     const ResourcePath&,
                                                                     AuditEvent&);

}  // namespace edl::fakekube
