// ScalarSeries: named series of (step, wall time, value) points held in
// bounded memory, for a live view of a job (the master's GET /series). Each
// series keeps at most `capacity` points spread evenly over the whole run:
// when one fills up, every other point is dropped and from then on only
// every second (then fourth, ...) new point is kept. The newest point is
// always kept besides, so a reader sees the current value.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace edl::roles::summary {

class ScalarSeries {
 public:
  struct Point {
    int64_t step = 0;
    double wall_time = 0;
    double value = 0;
  };

  // REQUIRES: capacity >= 2.
  explicit ScalarSeries(size_t capacity = 1000);

  void Add(const std::string& tag, int64_t step, double wall_time, double value);

  // The points of `tag` as kept, then the newest one if it was not kept.
  std::vector<Point> Points(const std::string& tag) const;
  // {"capacity": N, "series": {"tag": [[step, wall_time, value], ...], ...}}.
  nlohmann::json ToJson() const;

 private:
  struct Series {
    std::vector<Point> kept;
    int64_t stride = 1;  // keep one point in `stride`
    int64_t offered = 0;
    Point newest;
  };
  std::vector<Point> PointsLocked(const Series& s) const;

  const size_t capacity_;
  mutable std::mutex mu_;
  std::map<std::string, Series> series_;
};

}  // namespace edl::roles::summary
