// EDL_CHECK: aborts with file, line and a message when an invariant is broken.
// For bugs only; failures of the world return a Status (base/status.h).
//
//   EDL_CHECK(n > 0) << "shape " << ShapeString(s);
//   EDL_CHECK_EQ(a.size(), b.size());
#pragma once

#include <sstream>

namespace edl::internal {

// Collects the streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `cond ? (void)0 : Voidify() & stream` type-check.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace edl::internal

#define EDL_CHECK(cond)                 \
  (cond) ? (void)0                      \
         : ::edl::internal::Voidify() & \
               ::edl::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

#define EDL_CHECK_OP_(a, op, b)                                                                  \
  ((a)op(b)) ? (void)0                                                                           \
             : ::edl::internal::Voidify() &                                                      \
                   ::edl::internal::CheckFailure(__FILE__, __LINE__, #a " " #op " " #b).stream() \
                       << "(" << (a) << " vs " << (b) << ") "

#define EDL_CHECK_EQ(a, b) EDL_CHECK_OP_(a, ==, b)
#define EDL_CHECK_NE(a, b) EDL_CHECK_OP_(a, !=, b)
#define EDL_CHECK_LT(a, b) EDL_CHECK_OP_(a, <, b)
#define EDL_CHECK_LE(a, b) EDL_CHECK_OP_(a, <=, b)
#define EDL_CHECK_GT(a, b) EDL_CHECK_OP_(a, >, b)
#define EDL_CHECK_GE(a, b) EDL_CHECK_OP_(a, >=, b)
