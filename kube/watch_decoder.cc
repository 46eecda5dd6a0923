#include <nlohmann/json.hpp>

#include "kube/watch.h"

namespace edl::kube {
namespace {

constexpr size_t kCompactBytes = size_t{1} << 20;

std::optional<WatchEvent::Type> ParseType(const std::string& s) {
  if (s == "ADDED") return WatchEvent::Type::kAdded;
  if (s == "MODIFIED") return WatchEvent::Type::kModified;
  if (s == "DELETED") return WatchEvent::Type::kDeleted;
  if (s == "BOOKMARK") return WatchEvent::Type::kBookmark;
  if (s == "ERROR") return WatchEvent::Type::kError;
  return std::nullopt;
}

std::string Excerpt(std::string_view line) {
  constexpr size_t kMax = 120;
  std::string s(line.substr(0, kMax));
  return line.size() > kMax ? s + "..." : s;
}

}  // namespace

const char* WatchEventTypeName(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::kAdded: return "ADDED";
    case WatchEvent::Type::kModified: return "MODIFIED";
    case WatchEvent::Type::kDeleted: return "DELETED";
    case WatchEvent::Type::kBookmark: return "BOOKMARK";
    case WatchEvent::Type::kError: return "ERROR";
  }
  return "?";
}

void WatchDecoder::Feed(std::string_view bytes) {
  EDL_CHECK(!finished_) << "WatchDecoder::Feed after Finish";
  if (start_ > 0 && (start_ == buffer_.size() || start_ >= kCompactBytes)) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  buffer_.append(bytes);
}

void WatchDecoder::Finish() { finished_ = true; }

Result<std::optional<WatchEvent>> WatchDecoder::Next() {
  while (start_ < buffer_.size()) {
    size_t newline = buffer_.find('\n', start_);
    std::string_view line;
    if (newline == std::string::npos) {
      if (!finished_) break;
      line = std::string_view(buffer_).substr(start_);
      start_ = buffer_.size();
    } else {
      line = std::string_view(buffer_).substr(start_, newline - start_);
      start_ = newline + 1;
    }
    ++line_;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    auto fail = [&](const std::string& what) {
      return InvalidArgument("watch event line " + std::to_string(line_) + ": " + what + ": " +
                             Excerpt(line));
    };
    Json j = Json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded()) return fail("not JSON");
    if (!j.is_object()) return fail("not a JSON object");
    auto type = j.find("type");
    if (type == j.end() || !type->is_string()) return fail("no string \"type\"");
    std::optional<WatchEvent::Type> t = ParseType(type->get<std::string>());
    if (!t) return fail("unknown type \"" + type->get<std::string>() + "\"");
    auto object = j.find("object");
    if (object == j.end() || !object->is_object()) {
      return fail("no \"object\" object");
    }
    return std::optional<WatchEvent>(WatchEvent{*t, std::move(*object), false});
  }
  return std::optional<WatchEvent>();
}

}  // namespace edl::kube
