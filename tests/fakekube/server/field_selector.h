// Field selectors (`metadata.name=x,status.phase!=Running`) with the field
// labels the real server supports for each resource; any other label is
// 400 `field label not supported: X`, like kube-apiserver.
#pragma once

#include <string>
#include <vector>

#include "tests/fakekube/server/resources.h"
#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

struct FieldRequirement {
  std::string field;   // "status.phase"
  bool equals = true;  // `=`/`==` (true) or `!=`
  std::string value;
};
using FieldSelector = std::vector<FieldRequirement>;

// Parses `text` for `resource`; 400 BadRequest on bad syntax or an
// unsupported field label. "" selects everything.
ApiResult<FieldSelector> ParseFieldSelector(const ResourceInfo& resource, const std::string& text);
// The field's value as the server's field-label conversion renders it
// (missing fields are "", booleans "true"/"false").
std::string FieldValue(const Json& object, const std::string& field);
bool MatchesFields(const FieldSelector& selector, const Json& object);

}  // namespace edl::fakekube
