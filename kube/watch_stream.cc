#include "kube/watch.h"
#include "net/http_connection.h"

namespace edl::kube {

WatchStream::WatchStream(std::unique_ptr<net::HttpConnection> connection, std::string description)
    : connection_(std::move(connection)), description_(std::move(description)) {}

WatchStream::~WatchStream() = default;

Result<std::optional<WatchEvent>> WatchStream::Next(std::chrono::milliseconds read_deadline) {
  const net::TimePoint deadline = net::SteadyClock::now() + read_deadline;
  char buf[64 * 1024];
  while (true) {
    if (!failure_.ok()) return failure_;
    if (cancelled_.load()) {
      failure_ = Unavailable(description_ + ": cancelled");
      return failure_;
    }
    Result<std::optional<WatchEvent>> event = decoder_.Next();
    if (!event.ok()) {
      connection_->Cancel();
      failure_ = event.status().WithPrefix(description_);
      return failure_;
    }
    if (event->has_value()) return event;
    if (ended_) return std::optional<WatchEvent>();
    Result<size_t> n = connection_->ReadBody(buf, sizeof(buf), deadline);
    if (!n.ok()) {
      if (n.status().code() == StatusCode::kDeadlineExceeded) {
        failure_ =
            DeadlineExceeded(description_ + ": nothing arrived within " +
                             std::to_string(read_deadline.count()) + " ms (half-open connection?)");
      } else {
        failure_ = n.status().WithPrefix(description_);
      }
      return failure_;
    }
    if (*n == 0) {
      decoder_.Finish();
      ended_ = true;  // drain what is buffered, then report the end
      continue;
    }
    decoder_.Feed(std::string_view(buf, *n));
  }
}

void WatchStream::Cancel() {
  cancelled_.store(true);
  connection_->Cancel();
}

}  // namespace edl::kube
