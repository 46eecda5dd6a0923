#include "roles/master/data_ledger.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/check.h"

namespace edl::roles::master {

DataLedger::DataLedger(TaskCuts cuts, int num_epochs)
    : cuts_(std::move(cuts)), times_(num_epochs), sums_(num_epochs) {
  EDL_CHECK_GE(num_epochs, 0);
  const int64_t records = cuts_.records();
  for (int e = 0; e < num_epochs; ++e) {
    sums_[e].epoch = e + 1;
    sums_[e].records = records;
    sums_[e].pending = records;
  }
}

void DataLedger::RecordTrained(int epoch, int64_t begin, int64_t end) {
  EDL_CHECK(epoch >= 1 && epoch <= static_cast<int>(times_.size())) << "epoch " << epoch;
  const int64_t index = begin >= 0 && begin < cuts_.records() ? cuts_.TaskOf(begin) : -1;
  EDL_CHECK(index >= 0 && cuts_.Range(index) == std::make_pair(begin, end))
      << "range [" << begin << ", " << end << ") is not a task";
  auto& times = times_[epoch - 1];
  if (times.empty()) times.assign(cuts_.num_tasks(), 0);
  EpochLedger& s = sums_[epoch - 1];
  const int64_t n = end - begin;
  uint16_t& t = times[index];
  if (t == 0) {
    s.trained += n;
    s.pending -= n;
  } else if (t == 1) {
    s.trained_more_than_once += n;
  }
  if (t < std::numeric_limits<uint16_t>::max()) ++t;
  s.record_trainings += n;
  total_ += n;
}

void DataLedger::RecordRedone(int epoch, int64_t begin, int64_t end) {
  EDL_CHECK(epoch >= 1 && epoch <= static_cast<int>(times_.size())) << "epoch " << epoch;
  const int64_t index = begin >= 0 && begin < cuts_.records() ? cuts_.TaskOf(begin) : -1;
  EDL_CHECK(index >= 0 && cuts_.Range(index) == std::make_pair(begin, end))
      << "range [" << begin << ", " << end << ") is not a task";
  sums_[epoch - 1].redone += end - begin;
}

int DataLedger::TimesTrained(int epoch, int64_t record) const {
  EDL_CHECK(epoch >= 1 && epoch <= static_cast<int>(times_.size()));
  EDL_CHECK(record >= 0 && record < cuts_.records());
  const auto& times = times_[epoch - 1];
  return times.empty() ? 0 : times[cuts_.TaskOf(record)];
}

std::vector<EpochLedger> DataLedger::Summary(bool job_ended) const {
  std::vector<EpochLedger> out = sums_;
  if (job_ended) {
    for (EpochLedger& s : out) std::swap(s.pending, s.missing);
  }
  return out;
}

std::string DataLedger::ToString(bool job_ended) const {
  std::string out;
  for (const EpochLedger& s : Summary(job_ended)) {
    out += "epoch " + std::to_string(s.epoch) + ": " + std::to_string(s.trained) + "/" +
           std::to_string(s.records) + " records trained, " +
           (job_ended ? std::to_string(s.missing) + " missing, "
                      : std::to_string(s.pending) + " pending, ") +
           std::to_string(s.trained_more_than_once) + " trained twice or more" +
           (s.redone > 0 ? ", " + std::to_string(s.redone) + " redone for a restored PS" : "") +
           "\n";
  }
  return out;
}

std::string DataLedger::ToJson(bool job_ended) const {
  nlohmann::json j = nlohmann::json::array();
  for (const EpochLedger& s : Summary(job_ended)) {
    j.push_back({{"epoch", s.epoch},
                 {"records", s.records},
                 {"trained", s.trained},
                 {"pending", s.pending},
                 {"missing", s.missing},
                 {"trained_more_than_once", s.trained_more_than_once},
                 {"record_trainings", s.record_trainings},
                 {"redone", s.redone}});
  }
  return j.dump();
}

}  // namespace edl::roles::master
