// Test-side reader of TensorBoard event files (tfevents_reader.h).
#include "tests/tensorboard/tfevents_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tensorboard_event.pb.h"

namespace edl::testing {
namespace {

uint32_t BitwiseCrc32c(const char* data, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= static_cast<unsigned char>(data[i]);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
  }
  return crc ^ 0xffffffffu;
}

uint32_t Masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

EventFile ReadOne(const std::string& path) {
  EventFile f;
  f.path = path;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 0;
  for (int index = 0; at < bytes.size(); ++index) {
    const std::string where = path + " record " + std::to_string(index) + ": ";
    if (bytes.size() - at < 12) return f.error = where + "truncated header", f;
    const uint64_t length = Load<uint64_t>(&bytes[at]);
    if (Masked(BitwiseCrc32c(&bytes[at], 8)) != Load<uint32_t>(&bytes[at + 8])) {
      return f.error = where + "length checksum", f;
    }
    if (bytes.size() - at - 12 < length + 4) return f.error = where + "truncated payload", f;
    const char* payload = &bytes[at + 12];
    if (Masked(BitwiseCrc32c(payload, length)) != Load<uint32_t>(payload + length)) {
      return f.error = where + "payload checksum", f;
    }
    tensorflow::Event event;
    if (!event.ParseFromArray(payload, static_cast<int>(length))) {
      return f.error = where + "not an Event", f;
    }
    if (index == 0) f.file_version = event.file_version();
    if (event.has_summary()) {
      for (const auto& v : event.summary().value()) {
        if (v.value_case() != tensorflow::SummaryValue::kSimpleValue) {
          return f.error = where + "a value that is not simple_value", f;
        }
        f.scalars.push_back({v.tag(), event.step(), event.wall_time(), v.simple_value()});
      }
    }
    at += 12 + length + 4;
  }
  return f;
}

}  // namespace

std::vector<EventFile> ReadEventFiles(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find("tfevents") != std::string::npos) paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<EventFile> files;
  for (const std::string& p : paths) files.push_back(ReadOne(p));
  return files;
}

std::vector<ScalarPoint> PointsOf(const std::vector<EventFile>& files, const std::string& tag) {
  std::vector<ScalarPoint> out;
  for (const EventFile& f : files) {
    for (const ScalarPoint& p : f.scalars) {
      if (p.tag == tag) out.push_back(p);
    }
  }
  return out;
}

}  // namespace edl::testing
