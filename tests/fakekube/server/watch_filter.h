// WatchFilter: what one watch request sees of the store's event stream, as
// the watch cache's cacheWatcher decides it: events of its resource and
// namespace whose object matches its selectors; a change that makes an
// object match is ADDED, one that makes it stop matching is DELETED
// (carrying the previous state at the new resource version). Also renders
// the wire lines (`{"type":..,"object":..}\n`) and BOOKMARK skeletons.
// Immutable once built; thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tests/fakekube/server/field_selector.h"
#include "tests/fakekube/server/resources.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

class WatchFilter {
 public:
  // ns "" watches every namespace.
  WatchFilter(const ResourceInfo& resource, std::string ns,
              std::shared_ptr<const LabelSelector> labels, FieldSelector fields);

  bool Matches(const Json& object) const;
  // The wire line for `event`, or nullopt if this watch does not see it.
  std::optional<std::string> Translate(const WatchEvent& event) const;
  // A synthetic ADDED line for a listed item (kind/apiVersion restored).
  std::string AddedLine(Json item) const;
  // A BOOKMARK line at `resource_version`.
  std::string BookmarkLine(uint64_t resource_version) const;

 private:
  const ResourceInfo& resource_;
  const std::string ns_;
  const std::shared_ptr<const LabelSelector> labels_;
  const FieldSelector fields_;
};

// The wire line for an ERROR event carrying `error`'s Status.
std::string ErrorLine(const ApiError& error);

}  // namespace edl::fakekube
