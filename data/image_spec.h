// The "image" object of a model spec's input (data/input_spec.h's
// ImageSpec) to and from JSON; docs/images.md has the fields.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "base/status.h"
#include "data/input_spec.h"

namespace edl::data {

// Errors are InvalidArgument naming `where` (e.g. "model.json: input.image")
// and the field: unknown fields, wrong types, bad values, a missing "size".
Result<ImageSpec> ImageSpecFromJson(const nlohmann::json& j, const std::string& where);

nlohmann::json ImageSpecToJson(const ImageSpec& spec);

}  // namespace edl::data
