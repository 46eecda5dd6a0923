// Lenient reads of an object's fields, for the fake's admission and
// validation: a field that is missing or of another JSON type reads as
// empty, and validation reports it where the API requires it.
#pragma once

#include <string>

#include "tests/fakekube/server/store.h"

namespace edl::fakekube {

// object[key] if it is a string, else "".
inline std::string StringAt(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// object[key] if it is an object, else {}.
inline Json ObjectAt(const Json& object, const char* key) {
  if (!object.is_object()) return Json::object();
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : Json::object();
}

// object[key] if it is an array, else [].
inline Json ArrayAt(const Json& object, const char* key) {
  if (!object.is_object()) return Json::array();
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : Json::array();
}

}  // namespace edl::fakekube
