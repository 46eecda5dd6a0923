#include "data/concat_source.h"

#include <algorithm>

#include "data/examples_source.h"

namespace edl::data {
namespace {

bool SameInput(const InputInfo& a, const InputInfo& b) {
  return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.num_ids == b.num_ids;
}

}  // namespace

ConcatSource::ConcatSource(std::string name, std::vector<std::unique_ptr<Source>> parts)
    : name_(std::move(name)), parts_(std::move(parts)) {
  starts_.push_back(0);
  for (const auto& p : parts_) starts_.push_back(starts_.back() + p->num_records());
}

Result<std::unique_ptr<ConcatSource>> ConcatSource::Create(
    std::string name, std::vector<std::unique_ptr<Source>> parts) {
  if (parts.empty()) return InvalidArgument(name + ": no files");
  const Source& first = *parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const Source& p = *parts[i];
    bool same = p.has_labels() == first.has_labels() && p.inputs().size() == first.inputs().size();
    for (size_t k = 0; same && k < p.inputs().size(); ++k) {
      same = SameInput(p.inputs()[k], first.inputs()[k]);
    }
    if (!same) {
      return InvalidArgument(
          p.name() + ": its records do not have the inputs" +
          std::string(p.has_labels() != first.has_labels() ? " and labels" : "") + " of " +
          first.name() + ", the data set's first file");
    }
  }
  return std::unique_ptr<ConcatSource>(new ConcatSource(std::move(name), std::move(parts)));
}

std::vector<int64_t> ConcatSource::file_records() const {
  std::vector<int64_t> out;
  for (const auto& p : parts_) {
    for (int64_t n : p->file_records()) out.push_back(n);
  }
  return out;
}

Result<Examples> ConcatSource::Read(int64_t begin, int64_t end) const {
  // Within one part (a task of a streamed data set): the part's own Read.
  if (begin >= 0 && begin < end && end <= num_records()) {
    const size_t part = static_cast<size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), begin) - starts_.begin() - 1);
    if (end <= starts_[part + 1])
      return parts_[part]->Read(begin - starts_[part], end - starts_[part]);
  }
  return Source::Read(begin, end);
}

bool ConcatSource::streamed() const {
  for (const auto& p : parts_) {
    if (p->streamed()) return true;
  }
  return false;
}

int64_t ConcatSource::corrupt_records_skipped() const {
  int64_t n = 0;
  for (const auto& p : parts_) n += p->corrupt_records_skipped();
  return n;
}

Result<std::unique_ptr<RecordCursor>> ConcatSource::OpenCursor(int64_t begin, int64_t end) const {
  if (begin >= 0 && begin < end && end <= num_records()) {
    const size_t part = static_cast<size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), begin) - starts_.begin() - 1);
    if (end <= starts_[part + 1]) {
      return parts_[part]->OpenCursor(begin - starts_[part], end - starts_[part]);
    }
  }
  return Source::OpenCursor(begin, end);
}

Result<Examples> ConcatSource::Gather(const std::vector<int64_t>& indices) const {
  EDL_RETURN_IF_ERROR(CheckIndices(indices));
  // Runs of indices in the same part, gathered from it, then joined.
  std::vector<Examples> pieces;
  size_t i = 0;
  while (i < indices.size()) {
    const size_t part = static_cast<size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), indices[i]) - starts_.begin() - 1);
    std::vector<int64_t> local;
    while (i < indices.size() && indices[i] >= starts_[part] && indices[i] < starts_[part + 1]) {
      local.push_back(indices[i] - starts_[part]);
      ++i;
    }
    EDL_ASSIGN_OR_RETURN(Examples e, parts_[part]->Gather(local));
    pieces.push_back(std::move(e));
  }
  if (pieces.empty()) return parts_[0]->Gather({});
  return JoinExamples(std::move(pieces));
}

}  // namespace edl::data
