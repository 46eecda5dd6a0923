#include "roles/ps/partition.h"

#include "base/check.h"

namespace edl::roles::ps {

uint64_t Fnv1a64(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

int PsOfParameter(const std::string& name, int num_ps) {
  EDL_CHECK_GE(num_ps, 1);
  return static_cast<int>(Fnv1a64(name) % static_cast<uint64_t>(num_ps));
}

int PsOfId(int64_t id, int num_ps) {
  EDL_CHECK_GE(num_ps, 1);
  EDL_CHECK_GE(id, 0) << "embedding id";
  return static_cast<int>(id % num_ps);
}

bool IsEmbeddingTable(const std::string& parameter_name) {
  static constexpr char kSuffix[] = "/embeddings";
  constexpr size_t n = sizeof(kSuffix) - 1;
  return parameter_name.size() > n &&
         parameter_name.compare(parameter_name.size() - n, n, kSuffix) == 0;
}

}  // namespace edl::roles::ps
