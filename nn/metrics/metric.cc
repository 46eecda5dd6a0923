#include "nn/metrics/metric.h"

namespace edl::nn::metrics {

Status Metric::StateSizeError(size_t expected, size_t got) const {
  return InvalidArgument("metric \"" + name_ + "\": cannot merge a state of " +
                         std::to_string(got) + " values into one of " +
                         std::to_string(expected));
}

}  // namespace edl::nn::metrics
