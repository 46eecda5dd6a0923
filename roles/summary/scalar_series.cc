// Bounded series of scalars (roles/summary/scalar_series.h).
#include "roles/summary/scalar_series.h"

#include <nlohmann/json.hpp>

#include "base/check.h"

namespace edl::roles::summary {

ScalarSeries::ScalarSeries(size_t capacity) : capacity_(capacity) {
  EDL_CHECK_GE(capacity, size_t{2}) << "series capacity";
}

void ScalarSeries::Add(const std::string& tag, int64_t step, double wall_time, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  Series& s = series_[tag];
  const Point p{step, wall_time, value};
  s.newest = p;
  if (s.offered++ % s.stride != 0) return;
  s.kept.push_back(p);
  if (s.kept.size() < capacity_) return;
  // Full: keep every other point and from now on every other offered one.
  size_t out = 0;
  for (size_t i = 0; i < s.kept.size(); i += 2) s.kept[out++] = s.kept[i];
  s.kept.resize(out);
  s.stride *= 2;
}

std::vector<ScalarSeries::Point> ScalarSeries::PointsLocked(const Series& s) const {
  std::vector<Point> out = s.kept;
  if (s.offered > 0 && (out.empty() || out.back().step != s.newest.step ||
                        out.back().wall_time != s.newest.wall_time)) {
    out.push_back(s.newest);
  }
  return out;
}

std::vector<ScalarSeries::Point> ScalarSeries::Points(const std::string& tag) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = series_.find(tag);
  return it == series_.end() ? std::vector<Point>{} : PointsLocked(it->second);
}

nlohmann::json ScalarSeries::ToJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json series = nlohmann::json::object();
  for (const auto& [tag, s] : series_) {
    nlohmann::json points = nlohmann::json::array();
    for (const Point& p : PointsLocked(s)) points.push_back({p.step, p.wall_time, p.value});
    series[tag] = std::move(points);
  }
  return {{"capacity", capacity_}, {"series", std::move(series)}};
}

}  // namespace edl::roles::summary
