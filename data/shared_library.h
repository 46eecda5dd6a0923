// SharedLibrary: a C library loaded at run time (dlopen) the first time a
// feature needs it, so that the edl binary starts on machines without it.
// Symbols are looked up by name into function pointers. Loaded libraries
// stay loaded until exit. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace edl::data {

class SharedLibrary {
 public:
  // The first of `names` (sonames, e.g. "libpq.so.5") that loads. The error
  // names `what` (e.g. "PostgreSQL support"), the sonames tried and `hint`
  // (how to install it).
  static Result<SharedLibrary> Open(const std::vector<std::string>& names, const std::string& what,
                                    const std::string& hint);

  // Sets *fn to the symbol `name`; an error names the library and symbol.
  template <typename F>
  Status Find(const char* name, F* fn) const {
    void* p = nullptr;
    EDL_RETURN_IF_ERROR(FindSymbol(name, &p));
    *fn = reinterpret_cast<F>(p);
    return Status::Ok();
  }

  const std::string& soname() const { return soname_; }

 private:
  Status FindSymbol(const char* name, void** out) const;
  void* handle_ = nullptr;
  std::string soname_;
};

}  // namespace edl::data
