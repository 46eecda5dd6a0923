// GarbageCollector: the kube-controller-manager's garbage collector, reduced
// to what a test cluster needs. It works only through the
// Store's public API, as the real one works through the API server:
//  * a namespaced object whose ownerReferences are all dangling (no object
//    with that uid in its namespace or at cluster scope) is deleted: pods
//    gracefully through Delete, others at once;
//  * an owner in foreground deletion (finalizer foregroundDeletion) gets its
//    dependents deleted, and loses the finalizer once no dependent with
//    blockOwnerDeletion remains (the store then removes it).
// Not thread-safe by itself: the Store runs one pass at a time.
#pragma once

#include <string>

namespace edl::fakekube {

class Store;

class GarbageCollector {
 public:
  explicit GarbageCollector(Store& store) : store_(store) {}

  // One pass over namespace `ns` ("" = every namespace).
  void Collect(const std::string& ns);

 private:
  Store& store_;
};

}  // namespace edl::fakekube
