// Kubernetes resource quantities ("500m", "2", "1Gi", "512Mi", "1e3", "1k")
// as the fake scheduler needs them: parsed into milli-units (the value times
// 1000, rounded up as apimachinery rounds when it asks for MilliValue) and
// printed back in canonical form for Node objects. Pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace edl::fakekube {

// REQUIRES nothing. InvalidArgument naming the text when it does not match
// apimachinery's grammar (<number><suffix>, suffix one of Ki Mi Gi Ti Pi Ei,
// n u m "" k M G T P E, or an exponent e<int>/E<int>) or is out of range.
Result<int64_t> ParseMilliQuantity(const std::string& text);

// The canonical form of a non-negative milli-quantity: "500m", "4",
// "8Gi" (binary suffixes when the value is a whole multiple of 1024, as for
// memory), "1500m".
std::string FormatMilliQuantity(int64_t milli, bool binary);

}  // namespace edl::fakekube
