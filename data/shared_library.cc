#include "data/shared_library.h"

#include <dlfcn.h>

namespace edl::data {

Result<SharedLibrary> SharedLibrary::Open(const std::vector<std::string>& names,
                                          const std::string& what, const std::string& hint) {
  std::string errors;
  for (const std::string& name : names) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      SharedLibrary lib;
      lib.handle_ = handle;
      lib.soname_ = name;
      return lib;
    }
    const char* e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name + ": cannot load");
  }
  return FailedPrecondition(what + " needs " + names.front() + ", which cannot be loaded (" +
                            errors + "): " + hint);
}

Status SharedLibrary::FindSymbol(const char* name, void** out) const {
  dlerror();
  *out = dlsym(handle_, name);
  if (*out == nullptr) {
    return FailedPrecondition(soname_ + " has no symbol " + name + " (too old a version?)");
  }
  return Status::Ok();
}

}  // namespace edl::data
