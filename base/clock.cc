#include "base/clock.h"

namespace edl {
Clock& SystemClock() {
  static RealClock clock;
  return clock;
}
}  // namespace edl
