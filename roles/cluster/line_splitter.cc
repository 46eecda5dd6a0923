#include "roles/cluster/line_splitter.h"

namespace edl::roles::cluster {

void LineSplitter::Append(std::string_view data) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    size_t take = nl == std::string_view::npos ? data.size() : nl;
    size_t room = kMaxLine - partial_.size();
    if (take > room) take = room;
    partial_.append(data.substr(0, take));
    data.remove_prefix(take);
    bool newline = !data.empty() && data.front() == '\n';
    if (newline) data.remove_prefix(1);
    if (newline || partial_.size() >= kMaxLine) {
      emit_(prefix_ + partial_);
      partial_.clear();
    }
  }
}

void LineSplitter::Flush() {
  if (partial_.empty()) return;
  emit_(prefix_ + partial_);
  partial_.clear();
}

}  // namespace edl::roles::cluster
