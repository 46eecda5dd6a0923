// TensorBoard event files (roles/summary/event_file.h).
#include "roles/summary/event_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>

#include "data/tfrecord.h"

namespace edl::roles::summary {
namespace {

// Protocol buffer wire format: a field's key is (number << 3) | wire type.
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutKey(std::string& out, int field, int wire_type) {
  PutVarint(out, static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type));
}

template <typename T>
void PutFixed(std::string& out, T value) {  // little-endian, as x86-64 stores it
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void PutBytes(std::string& out, int field, std::string_view bytes) {
  PutKey(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

// tensorflow.Event's fields: wall_time 1 (double), step 2 (int64),
// file_version 3 (string), summary 5 (Summary). Summary: value 1 (repeated
// Summary.Value). Summary.Value: tag 1 (string), simple_value 2 (float).
std::string EventHeader(double wall_time, int64_t step) {
  std::string e;
  PutKey(e, 1, kFixed64);
  PutFixed(e, wall_time);
  if (step != 0) {
    PutKey(e, 2, kVarint);
    PutVarint(e, static_cast<uint64_t>(step));
  }
  return e;
}

std::string Errno() { return std::strerror(errno); }

}  // namespace

Scalars LossAndMetrics(const std::string& prefix, double loss,
                       const std::vector<std::pair<std::string, double>>& metrics) {
  Scalars out{{prefix + "loss", loss}};
  for (const auto& [name, value] : metrics) out.emplace_back(prefix + name, value);
  return out;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string FileVersionEvent(double wall_time) {
  std::string e = EventHeader(wall_time, 0);
  PutBytes(e, 3, "brain.Event:2");
  return e;
}

std::string ScalarEvent(int64_t step, double wall_time, std::string_view tag, float value) {
  std::string v;
  PutBytes(v, 1, tag);
  PutKey(v, 2, kFixed32);
  PutFixed(v, value);
  std::string summary;
  PutBytes(summary, 1, v);
  std::string e = EventHeader(wall_time, step);
  PutBytes(e, 5, summary);
  return e;
}

Status CheckEventDir(const std::string& flag, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return IoError(flag + " " + dir + ": cannot create the directory: " + ec.message());
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return IoError(flag + " " + dir + ": cannot write in it: " + Errno());
  }
  return Status::Ok();
}

Result<std::unique_ptr<EventFileWriter>> EventFileWriter::Open(const std::string& flag,
                                                               const std::string& dir,
                                                               double wall_time) {
  EDL_RETURN_IF_ERROR(CheckEventDir(flag, dir));
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    std::strcpy(host, "localhost");
  }
  static std::atomic<int> opened{0};
  const std::string path =
      dir + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(wall_time)) + "." + host +
      "." + std::to_string(::getpid()) + "." + std::to_string(opened.fetch_add(1)) + ".edl";
  std::FILE* file = std::fopen(path.c_str(), "wbx");  // never overwrites
  if (file == nullptr) {
    return IoError(flag + " " + dir + ": cannot create " + path + ": " + Errno());
  }
  auto writer = std::unique_ptr<EventFileWriter>(new EventFileWriter(path, file));
  Status s = writer->Append(FileVersionEvent(wall_time));
  if (s.ok() && std::fflush(file) != 0) s = IoError("cannot write " + path + ": " + Errno());
  if (!s.ok()) return s.WithPrefix(flag);
  return writer;
}

EventFileWriter::~EventFileWriter() { std::fclose(file_); }

Status EventFileWriter::Append(const std::string& event) {
  const std::string frame = data::TfRecordFrame(event);
  if (std::fwrite(frame.data(), 1, frame.size(), file_) != frame.size()) {
    return IoError("cannot write " + path_ + ": " + Errno());
  }
  return Status::Ok();
}

Status EventFileWriter::Write(int64_t step, double wall_time, const Scalars& scalars) {
  for (const auto& [tag, value] : scalars) {
    EDL_RETURN_IF_ERROR(Append(ScalarEvent(step, wall_time, tag, static_cast<float>(value))));
  }
  if (std::fflush(file_) != 0) return IoError("cannot write " + path_ + ": " + Errno());
  return Status::Ok();
}

}  // namespace edl::roles::summary
