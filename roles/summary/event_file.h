// EventFileWriter: TensorBoard's event files. Each file is a sequence of
// TFRecord-framed `tensorflow.Event` protocol buffers (data/tfrecord.h): the
// first names the format ("brain.Event:2"), every later one carries one
// scalar as `Summary.Value{tag, simple_value}` at a step and a wall time,
// which TensorBoard's Scalars dashboard plots. The protocol buffers are
// encoded here by hand (a handful of fields), so no generated code is
// linked into edl.
//
// A file is named events.out.tfevents.<unix seconds>.<host>.<pid>.<n>.edl
// and never reopened: a restarted writer (a new master after a failover,
// a resumed job) starts a new file in the same directory, and TensorBoard
// reads every file of a directory as one run.
//
// Not thread-safe: one owner writes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace edl::roles::summary {

using Scalars = std::vector<std::pair<std::string, double>>;

class EventFileWriter {
 public:
  // Creates `dir` (with its parents) and a new event file in it holding the
  // file-version event. IoError naming `flag` and the path when either
  // cannot be created or written.
  static Result<std::unique_ptr<EventFileWriter>> Open(const std::string& flag,
                                                       const std::string& dir, double wall_time);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // Appends one event per scalar and flushes them to the file, so a running
  // TensorBoard sees them. Non-finite values are written as they are (NaN
  // shows as a gap). IoError naming the file when the write fails.
  Status Write(int64_t step, double wall_time, const Scalars& scalars);

  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  Status Append(const std::string& event);

  std::string path_;
  std::FILE* file_;
};

// Creates `dir` (with its parents) and checks that files can be made in
// it; IoError naming `flag` and `dir` otherwise. Open() does the same.
Status CheckEventDir(const std::string& flag, const std::string& dir);

// {prefix + "loss", loss}, then {prefix + name, value} per metric.
Scalars LossAndMetrics(const std::string& prefix, double loss,
                       const std::vector<std::pair<std::string, double>>& metrics);

// Seconds since the Unix epoch, now: an event's wall time.
double WallSeconds();

// The encoded Event protocol buffers (without the TFRecord frame).
std::string FileVersionEvent(double wall_time);
std::string ScalarEvent(int64_t step, double wall_time, std::string_view tag, float value);

}  // namespace edl::roles::summary
