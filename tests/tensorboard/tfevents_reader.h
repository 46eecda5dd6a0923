// Reads TensorBoard event files for the tests, independently of edl's
// writer (roles/summary/event_file.cc): its own bitwise CRC-32C for the TFRecord
// frames and protoc's generated parser for the Event protocol buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edl::testing {

struct ScalarPoint {
  std::string tag;
  int64_t step = 0;
  double wall_time = 0;
  float value = 0;
};

struct EventFile {
  std::string path;
  std::string file_version;          // of the first event
  std::vector<ScalarPoint> scalars;  // in file order
  std::string error;                 // empty when every frame and event parsed
};

// Every file under `dir` whose name contains "tfevents", sorted by name.
std::vector<EventFile> ReadEventFiles(const std::string& dir);

// The points of `tag` over all files, in order.
std::vector<ScalarPoint> PointsOf(const std::vector<EventFile>& files, const std::string& tag);

}  // namespace edl::testing
